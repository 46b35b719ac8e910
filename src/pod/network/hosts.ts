// The /etc/hosts the kubelet writes for a pod's containers (upstream kubelet_pods.go makeHostsMount /
// ensureHostsFile): a managed file with localhost entries and the pod's IPs under its hostname (FQDN
// first when the pod has a subdomain), or, for hostNetwork pods, the node's /etc/hosts behind a
// header; hostAliases appended either way. Mounted at /etc/hosts unless a volume mounts there, once
// the pod IP is known.
export const ETC_HOSTS_PATH = "/etc/hosts";
const MANAGED_HEADER = "# Kubernetes-managed hosts file.\n";
const MANAGED_HEADER_HOST_NETWORK = "# Kubernetes-managed hosts file (host network).\n";

export interface HostAlias {
  ip: string;
  hostnames?: string[];
}

/** upstream hostsEntriesFromHostAliases. */
function hostAliasEntries(aliases: readonly HostAlias[] | undefined): string {
  if (!aliases?.length) return "";
  return `\n# Entries added by HostAliases.\n${aliases.map((a) => `${a.ip}\t${(a.hostnames ?? []).join("\t")}\n`).join("")}`;
}

/** upstream managedHostsFileContent. */
export function managedHostsFileContent(podIPs: readonly string[], hostname: string, hostDomain: string, aliases?: readonly HostAlias[]): string {
  let out = MANAGED_HEADER;
  out += "127.0.0.1\tlocalhost\n";
  out += "::1\tlocalhost ip6-localhost ip6-loopback\n";
  out += "fe00::0\tip6-localnet\n";
  out += "fe00::0\tip6-mcastprefix\n";
  out += "fe00::1\tip6-allnodes\n";
  out += "fe00::2\tip6-allrouters\n";
  for (const ip of podIPs) out += hostDomain ? `${ip}\t${hostname}.${hostDomain}\t${hostname}\n` : `${ip}\t${hostname}\n`;
  return out + hostAliasEntries(aliases);
}

/** upstream nodeHostsFileContent: the node's hosts file for hostNetwork pods. */
export function nodeHostsFileContent(nodeHosts: string, aliases?: readonly HostAlias[]): string {
  return MANAGED_HEADER_HOST_NETWORK + nodeHosts + hostAliasEntries(aliases);
}
