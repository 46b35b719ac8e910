// The I/O edge of a pod's DNS and /etc/hosts (the pure parts are src/pod/network): reading the node's
// resolv.conf and hosts file, writing <rootDir>/pods/<uid>/etc-hosts (upstream getEtcHostsPath), and
// logging the warnings upstream records as events.
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { kv, log } from "../../log.ts";
import { type DnsSettings, managedHostsFileContent, nodeHostsFileContent, podDnsConfig, podHostnameAndDomain } from "../network/index.ts";
import { makePodDir } from "../pod-dir.ts";
import type { KubePod } from "./types.ts";
import { podKey } from "../pod-like.ts";

export const DEFAULT_DNS_SETTINGS: DnsSettings = { clusterDNS: [], clusterDomain: "", resolvConf: "/etc/resolv.conf" };

/**
 * upstream GetPodDNS with the node's resolv.conf read now; with `logEvents` (once per sandbox) its
 * warnings are logged and the pod's go to `podWarning` (the events recorder). Throws when resolv.conf
 * cannot be read.
 */
export function sandboxDnsConfig(
  pod: KubePod,
  settings: DnsSettings,
  nodeIPs: string[],
  logEvents: boolean,
  podWarning?: (reason: string, message: string) => void,
) {
  let text = "";
  if (settings.resolvConf) {
    try {
      text = readFileSync(settings.resolvConf, "utf8");
    } catch (e) {
      throw new Error(`open ${settings.resolvConf}: ${(e as Error).message}`);
    }
  }
  const { config, events } = podDnsConfig(pod, settings, text, nodeIPs);
  if (logEvents)
    for (const e of events) {
      log.warn(`pod DNS ${kv({ pod: podKey(pod), object: e.object, event: e.reason, message: e.message })}`);
      if (e.object === "pod") podWarning?.(e.reason, e.message);
    }
  return config;
}

/** upstream ensureHostsFile: writes the pod's hosts file (0644) and returns its path. */
export function writePodHostsFile(rootDir: string, pod: KubePod, podIPs: string[], clusterDomain: string, nodeHostsPath = "/etc/hosts"): string {
  const dir = makePodDir(rootDir, pod.metadata.uid ?? "");
  const path = join(dir, "etc-hosts");
  const { hostname, hostDomain } = podHostnameAndDomain(pod, clusterDomain);
  const content = pod.spec.hostNetwork
    ? nodeHostsFileContent(readFileSync(nodeHostsPath, "utf8"), pod.spec.hostAliases)
    : managedHostsFileContent(podIPs, hostname, hostDomain, pod.spec.hostAliases);
  writeFileSync(path, content, { mode: 0o644 });
  chmodSync(path, 0o644);
  return path;
}
