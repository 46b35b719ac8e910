// The pod's DNS configuration handed to the runtime (upstream pkg/kubelet/network/dns): from the
// node's resolv.conf (kubelet `resolvConf`), the kubelet's `clusterDNS`/`clusterDomain`, the pod's
// dnsPolicy and dnsConfig, cut to resolver limits. Pure: the resolv.conf text comes in; the warnings
// upstream records as events come out, for the caller to log.
import type { DNSConfig } from "../../cri/types.ts";

/** Resolver limits (upstream validation.MaxDNSNameservers / MaxDNSSearchPaths / MaxDNSSearchListChars). */
export const MAX_DNS_NAMESERVERS = 3;
export const MAX_DNS_SEARCH_PATHS = 32;
export const MAX_DNS_SEARCH_LIST_CHARS = 2048;
const DNS1123_SUBDOMAIN_MAX = 253;
const DEFAULT_DNS_OPTIONS = ["ndots:5"];

export interface DnsSettings {
  /** kubelet clusterDNS (IPs). */
  clusterDNS: readonly string[];
  /** kubelet clusterDomain ("" = none). */
  clusterDomain: string;
  /** kubelet resolvConf path ("" = no host DNS: localhost). */
  resolvConf: string;
}

export interface DnsPod {
  metadata: { name: string; namespace?: string; uid?: string };
  spec: {
    hostNetwork?: boolean;
    dnsPolicy?: string;
    dnsConfig?: { nameservers?: string[]; searches?: string[]; options?: { name: string; value?: string }[] };
  };
}

/** A warning upstream records as an event (on the pod or the node). */
export interface DnsEvent {
  object: "pod" | "node";
  reason: "MissingClusterDNS" | "DNSConfigForming";
  message: string;
}

/** upstream parseResolvConf: nameservers accumulate, the last search/options line wins (options merge by name). */
export function parseResolvConf(text: string): { servers: string[]; searches: string[]; options: string[]; errors: string[] } {
  const out = { servers: [] as string[], searches: [] as string[], options: [] as string[], errors: [] as string[] };
  for (const line of text.split("\n")) {
    const trimmed = line.trim();
    if (trimmed.startsWith("#")) continue;
    const f = trimmed.split(/\s+/).filter(Boolean);
    if (f.length === 0) continue;
    if (f[0] === "nameserver") {
      if (f.length >= 2) out.servers.push(f[1]!);
      else out.errors.push("nameserver list is empty ");
    } else if (f[0] === "search") {
      out.searches = f
        .slice(1)
        .filter((s) => s !== ".")
        .map((s) => s.replace(/\.$/, ""));
    } else if (f[0] === "options") {
      out.options = appendOptions(out.options, f.slice(1));
    }
  }
  return out;
}

/** upstream appendOptions: a later option of the same name replaces the earlier one. */
function appendOptions(options: string[], more: string[]): string[] {
  const byName = new Map<string, string>();
  for (const o of [...options, ...more]) byName.set(o.split(":")[0]!, o);
  return [...byName.values()];
}

const unique = (xs: readonly string[]) => [...new Set(xs)];

/** upstream mergeDNSOptions: the pod's options override same-named ones; `name:value`. */
function mergeDnsOptions(existing: string[], pod: { name: string; value?: string }[]): string[] {
  const byName = new Map<string, string>();
  for (const o of existing) {
    const i = o.indexOf(":");
    byName.set(i < 0 ? o : o.slice(0, i), i < 0 ? "" : o.slice(i + 1));
  }
  for (const o of pod) byName.set(o.name, o.value ?? "");
  return [...byName].map(([k, v]) => (v ? `${k}:${v}` : k));
}

/** upstream getPodDNSType: "cluster", "host" or "none". */
export function podDnsType(pod: DnsPod): "cluster" | "host" | "none" {
  switch (pod.spec.dnsPolicy ?? "ClusterFirst") {
    case "None":
      return "none";
    case "ClusterFirstWithHostNet":
      return "cluster";
    case "Default":
      return "host";
    default:
      return pod.spec.hostNetwork ? "host" : "cluster";
  }
}

/** upstream formDNSSearchFitsLimits + formDNSNameserversFitsLimits. */
function fitLimits(cfg: Required<DNSConfig>, events: DnsEvent[]): Required<DNSConfig> {
  let servers = cfg.servers;
  if (servers.length > MAX_DNS_NAMESERVERS) {
    servers = servers.slice(0, MAX_DNS_NAMESERVERS);
    events.push({
      object: "pod",
      reason: "DNSConfigForming",
      message: `Nameserver limits were exceeded, some nameservers have been omitted, the applied nameserver line is: ${servers.join(" ")}`,
    });
  }
  let searches = cfg.searches;
  let exceeded = false;
  if (searches.length > MAX_DNS_SEARCH_PATHS) {
    searches = searches.slice(0, MAX_DNS_SEARCH_PATHS);
    exceeded = true;
  }
  const fitting = searches.filter((s) => s.length <= DNS1123_SUBDOMAIN_MAX);
  if (fitting.length !== searches.length) exceeded = true;
  searches = fitting;
  while (searches.join(" ").length > MAX_DNS_SEARCH_LIST_CHARS) {
    searches = searches.slice(0, -1);
    exceeded = true;
  }
  if (exceeded)
    events.push({
      object: "pod",
      reason: "DNSConfigForming",
      message: `Search Line limits were exceeded, some search paths have been omitted, the applied search line is: ${searches.join(" ")}`,
    });
  return { servers, searches, options: cfg.options };
}

/** upstream format.Pod. */
const formatPod = (pod: DnsPod) => `${pod.metadata.name}_${pod.metadata.namespace ?? ""}(${pod.metadata.uid ?? ""})`;

/**
 * upstream Configurer.GetPodDNS. `resolvConfText` is the content of settings.resolvConf (ignored when
 * that is ""); `nodeIPs` choose 127.0.0.1 or ::1 as the nameserver when there is no resolv.conf.
 */
export function podDnsConfig(
  pod: DnsPod,
  settings: DnsSettings,
  resolvConfText: string,
  nodeIPs: readonly string[] = [],
): { config: Required<DNSConfig>; events: DnsEvent[] } {
  const events: DnsEvent[] = [];
  const host = settings.resolvConf ? parseResolvConf(resolvConfText) : { servers: [], searches: [], options: [] };
  let cfg: Required<DNSConfig> = { servers: host.servers, searches: host.searches, options: host.options };
  let type = podDnsType(pod);
  if (type === "none") cfg = { servers: [], searches: [], options: [] };
  if (type === "cluster") {
    if (settings.clusterDNS.length > 0) {
      const d = settings.clusterDomain;
      const clusterSearch = d ? [`${pod.metadata.namespace ?? ""}.svc.${d}`, `svc.${d}`, d] : [];
      cfg = { servers: [...settings.clusterDNS], searches: d ? unique([...clusterSearch, ...cfg.searches]) : cfg.searches, options: [...DEFAULT_DNS_OPTIONS] };
    } else {
      const msg = `kubelet does not have ClusterDNS IP configured and cannot create Pod using "ClusterFirst" policy. Falling back to "Default" policy.`;
      events.push({ object: "node", reason: "MissingClusterDNS", message: msg });
      events.push({ object: "pod", reason: "MissingClusterDNS", message: `pod: ${JSON.stringify(formatPod(pod))}. ${msg}` });
      type = "host";
    }
  }
  if (type === "host" && !settings.resolvConf) {
    const local = nodeIPs.map((ip) => (ip.includes(":") ? "::1" : "127.0.0.1"));
    cfg = { servers: [...cfg.servers, ...(local.length > 0 ? local : ["127.0.0.1"])], searches: ["."], options: cfg.options };
  }
  const podCfg = pod.spec.dnsConfig;
  if (podCfg) {
    cfg = {
      servers: unique([...cfg.servers, ...(podCfg.nameservers ?? [])]),
      searches: unique([...cfg.searches, ...(podCfg.searches ?? [])]),
      options: mergeDnsOptions(cfg.options, podCfg.options ?? []),
    };
  }
  return { config: fitLimits(cfg, events), events };
}
