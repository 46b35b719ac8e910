// status.addresses (upstream nodestatus.NodeAddress without a cloud provider): the --node-ip
// addresses as InternalIP (dual-stack: both), else the IPv4 (then IPv6) address of the interface
// holding the default route, else the first non-loopback address; then the Hostname address.
import { readFileSync } from "node:fs";
import { isIP } from "node:net";
import { networkInterfaces } from "node:os";

export interface NodeAddress {
  type: "InternalIP" | "ExternalIP" | "Hostname";
  address: string;
}

export class NodeIPError extends Error {}

function defaultRouteInterface(): string | undefined {
  try {
    for (const line of readFileSync("/proc/net/route", "utf8").split("\n").slice(1)) {
      const [iface, dest, , flags] = line.trim().split(/\s+/);
      if (dest === "00000000" && (Number.parseInt(flags ?? "0", 16) & 1) === 1) return iface;
    }
  } catch {}
  return undefined;
}

export function detectNodeIP(): string | undefined {
  const ifaces = networkInterfaces();
  const pick = (name: string | undefined, family: "IPv4" | "IPv6") =>
    (name ? ifaces[name]?.find((a) => a.family === family && !a.internal && !a.address.startsWith("fe80")) : undefined)?.address;
  const def = defaultRouteInterface();
  const viaRoute = pick(def, "IPv4") ?? pick(def, "IPv6");
  if (viaRoute) return viaRoute;
  for (const family of ["IPv4", "IPv6"] as const) {
    for (const name of Object.keys(ifaces)) {
      const a = pick(name, family);
      if (a) return a;
    }
  }
  return undefined;
}

/** The node's addresses from --node-ip (comma-separated, up to one per family) or detection. */
export function nodeAddresses(hostname: string, nodeIP?: string, detect: () => string | undefined = detectNodeIP): NodeAddress[] {
  const ips = (nodeIP ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  for (const ip of ips)
    if (!isIP(ip))
      throw new NodeIPError(`failed to parse node IP "${ip}": --node-ip must be an IP address or a comma-separated pair of IPv4 and IPv6 addresses`);
  if (ips.length > 2 || (ips.length === 2 && isIP(ips[0]!) === isIP(ips[1]!)))
    throw new NodeIPError(`--node-ip "${nodeIP}": dual-stack must be one IPv4 and one IPv6 address`);
  if (!ips.length) {
    const d = detect();
    if (d) ips.push(d);
  }
  return [...ips.map((address) => ({ type: "InternalIP" as const, address })), { type: "Hostname", address: hostname }];
}
