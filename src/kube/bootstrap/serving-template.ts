// What the kubelet asks for as its serving certificate (upstream pkg/kubelet/certificate/kubelet.go
// newGetTemplateFn + addressesToHostnamesAndIPs, client-go DefaultKubeletServingGetUsages):
//   subject O=system:nodes, CN=system:node:<node>; SANs from the node's status addresses —
//   Hostname (DNS, or IP when it parses as one), InternalIP/ExternalIP (IP), InternalDNS/ExternalDNS
//   (DNS) — deduplicated and sorted; no template (no request) until there is at least one IP, or a
//   DNS name with the AllowDNSOnlyNodeCSR feature gate. The key is ECDSA P-256, so the usages are
//   digital signature + server auth (key encipherment only goes with RSA keys).
import type { X509Certificate } from "node:crypto";
import { isIP } from "node:net";
import { ipBytes } from "./csr.ts";

export const KUBELET_SERVING_SIGNER = "kubernetes.io/kubelet-serving";
export const SERVING_USAGES = ["digital signature", "server auth"] as const;

export interface NodeAddressLike {
  type: string;
  address: string;
}

export interface ServingTemplate {
  commonName: string;
  organizations: string[];
  dnsNames: string[];
  ipAddresses: string[];
}

const ipKey = (ip: string) => ipBytes(ip).toString("hex");

/** Go's net.IP.String() order is what upstream sorts by; the canonical text is close enough for a stable order. */
function canonicalIP(ip: string): string {
  const b = ipBytes(ip);
  if (b.length === 4) return [...b].join(".");
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(b.readUInt16BE(i).toString(16));
  return groups
    .join(":")
    .replace(/(^|:)0(:0)+(:|$)/, "::")
    .replace(/:{3,}/, "::");
}

export function hostnamesAndIPs(addresses: readonly NodeAddressLike[]): { dnsNames: string[]; ipAddresses: string[] } {
  const dns = new Set<string>();
  const ips = new Map<string, string>();
  const addIP = (a: string) => ips.set(ipKey(a), canonicalIP(a));
  for (const { type, address } of addresses) {
    if (!address) continue;
    if (type === "Hostname") {
      if (isIP(address)) addIP(address);
      else dns.add(address);
    } else if (type === "InternalIP" || type === "ExternalIP") {
      if (isIP(address)) addIP(address);
    } else if (type === "InternalDNS" || type === "ExternalDNS") {
      dns.add(address);
    }
  }
  return { dnsNames: [...dns].sort(), ipAddresses: [...ips.values()].sort() };
}

export function servingTemplate(nodeName: string, addresses: readonly NodeAddressLike[], allowDnsOnly = false): ServingTemplate | undefined {
  const { dnsNames, ipAddresses } = hostnamesAndIPs(addresses);
  const enough = ipAddresses.length > 0 || (allowDnsOnly && dnsNames.length > 0);
  if (!enough) return undefined;
  return { commonName: `system:node:${nodeName}`, organizations: ["system:nodes"], dnsNames, ipAddresses };
}

const sameSet = (a: readonly string[], b: readonly string[]) => a.length === b.length && new Set(a).size === new Set([...a, ...b]).size;

/** SANs of a certificate as Node prints them ("DNS:a, IP Address:10.0.0.1"). */
export function certAltNames(cert: X509Certificate): { dnsNames: string[]; ipAddresses: string[] } {
  const dnsNames: string[] = [];
  const ipAddresses: string[] = [];
  for (const part of (cert.subjectAltName ?? "").split(/,\s*/)) {
    if (part.startsWith("DNS:")) dnsNames.push(part.slice(4));
    else if (part.startsWith("IP Address:")) ipAddresses.push(part.slice(11));
  }
  return { dnsNames, ipAddresses };
}

/** upstream certSatisfiesTemplateLocked: same CN, organizations, DNS names and IPs (as sets). */
export function certSatisfiesTemplate(cert: X509Certificate, t: ServingTemplate): boolean {
  const subject = cert.subject.split("\n");
  const cn = subject.find((l) => l.startsWith("CN="))?.slice(3);
  const orgs = subject.filter((l) => l.startsWith("O=")).map((l) => l.slice(2));
  if (cn !== t.commonName || !sameSet(orgs, t.organizations)) return false;
  const sans = certAltNames(cert);
  let certIPs: string[];
  try {
    certIPs = sans.ipAddresses.map(ipKey);
  } catch {
    return false;
  }
  return sameSet(sans.dnsNames, t.dnsNames) && sameSet(certIPs, t.ipAddresses.map(ipKey));
}
