// status.addresses (upstream nodestatus.NodeAddress without a cloud provider): the --node-ip
// addresses as InternalIP (dual-stack: both), else the IPv4 (then IPv6) address of the interface
// holding the default route, else the first non-loopback address; then the Hostname address.
// A --node-ip is checked at each status update as upstream's validateNodeIP does (kubelet_node_status.go):
// an address no node can be reached at (loopback, multicast, link-local, all zeros) or one the host
// does not have fails the setter, and the node keeps the addresses it had (none for a new Node).
import { readFileSync } from "node:fs";
import { isIP } from "node:net";
import { networkInterfaces } from "node:os";
import { isLinkLocalUnicast, isLoopback, isMulticast, isUnspecified, sameIP } from "../server/address.ts";

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

/** The host's interface addresses, as Go's net.InterfaceAddrs lists them (every interface, loopback too). */
export function interfaceAddresses(): string[] {
  return Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((a) => a.address));
}

/**
 * --node-ip parsed (upstream ParseNodeIPArgument): one address, or one IPv4 and one IPv6 address;
 * `0.0.0.0` or `::` alone means "not given" (the address is detected). Throws NodeIPError.
 */
export function parseNodeIPs(nodeIP?: string): string[] {
  const ips = (nodeIP ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  for (const ip of ips)
    if (!isIP(ip))
      throw new NodeIPError(`failed to parse node IP "${ip}": --node-ip must be an IP address or a comma-separated pair of IPv4 and IPv6 addresses`);
  if (ips.length > 2 || (ips.length === 2 && isIP(ips[0]!) === isIP(ips[1]!)))
    throw new NodeIPError(`--node-ip "${nodeIP}": dual-stack must be one IPv4 and one IPv6 address`);
  if (ips.length === 2 && ips.some((ip) => isUnspecified(ip)))
    throw new NodeIPError(`--node-ip "${nodeIP}": dual-stack node IP cannot include '0.0.0.0' or '::'`);
  return ips.length === 1 && isUnspecified(ips[0]!) ? [] : ips;
}

/** Upstream validateNodeIP: why `ip` cannot be the node's IP, or undefined when it can (`hostAddresses`: interfaceAddresses()). */
export function validateNodeIP(ip: string, hostAddresses: readonly string[]): string | undefined {
  if (!isIP(ip)) return "nodeIP must be a valid IP address";
  if (isLoopback(ip)) return "nodeIP can't be loopback address";
  if (isMulticast(ip)) return "nodeIP can't be a multicast address";
  if (isLinkLocalUnicast(ip)) return "nodeIP can't be a link-local unicast address";
  if (isUnspecified(ip)) return "nodeIP can't be an all zeros address";
  if (hostAddresses.some((a) => sameIP(a, ip))) return undefined;
  return `node IP: "${ip}" not found in the host's network interfaces`;
}

/** What nodeAddresses reads from the host: the detected address and the interfaces' addresses. */
export interface HostNetwork {
  detect(): string | undefined;
  interfaceAddresses(): readonly string[];
}

const thisHost: HostNetwork = { detect: detectNodeIP, interfaceAddresses };

/**
 * The node's addresses from --node-ip (comma-separated, up to one per family) or detection. Throws
 * NodeIPError when --node-ip does not parse, or fails validateNodeIP (upstream's setter error,
 * "failed to validate nodeIP: …" / "failed to validate secondaryNodeIP: …").
 */
export function nodeAddresses(hostname: string, nodeIP?: string, host: HostNetwork = thisHost): NodeAddress[] {
  const ips = parseNodeIPs(nodeIP);
  if (ips.length > 0) {
    const interfaces = host.interfaceAddresses();
    ips.forEach((ip, i) => {
      const why = validateNodeIP(ip, interfaces);
      if (why) throw new NodeIPError(`failed to validate ${i === 0 ? "nodeIP" : "secondaryNodeIP"}: ${why}`);
    });
  } else {
    const d = host.detect();
    if (d) ips.push(d);
  }
  return [...ips.map((address) => ({ type: "InternalIP" as const, address })), { type: "Hostname", address: hostname }];
}
