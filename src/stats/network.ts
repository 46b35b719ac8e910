// Network figures of a network namespace, read from /proc/<pid>/net/dev of a process inside it (the
// node: bunlet's own; a pod: one of its processes), with the interfaces cAdvisor ignores dropped (lo,
// veth*, docker*, nerdctl*). The Summary API's NetworkStats names one default interface inline — eth0,
// as upstream's stats helper (defaultNetworkInterfaceName) — and lists every interface.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { InterfaceStats, NetworkStats } from "./summary.ts";

/** cAdvisor skips these (container/libcontainer network: lo, veth*, docker*, …). */
const IGNORED_DEVICE = /^(lo$|veth|docker|nerdctl)/;
export const DEFAULT_NETWORK_INTERFACE = "eth0";

/** Pure: /proc/<pid>/net/dev → per-interface bytes and errors, ignored devices dropped. */
export function parseNetDevInterfaces(text: string): Required<InterfaceStats>[] {
  const out: Required<InterfaceStats>[] = [];
  for (const line of text.split("\n").slice(2)) {
    const m = /^\s*([^:\s]+):\s*(.*)$/.exec(line);
    if (!m || IGNORED_DEVICE.test(m[1]!)) continue;
    const f = m[2]!.trim().split(/\s+/).map(Number);
    if (f.length < 16 || f.some((x) => !Number.isFinite(x))) continue;
    out.push({ name: m[1]!, rxBytes: f[0]!, rxErrors: f[2]!, txBytes: f[8]!, txErrors: f[10]! });
  }
  return out;
}

/** Pure: the Summary API's NetworkStats: every interface, and eth0's figures inline when there is one. */
export function networkStats(interfaces: InterfaceStats[], time: string): NetworkStats {
  const def = interfaces.find((i) => i.name === DEFAULT_NETWORK_INTERFACE);
  return { time, ...(def ?? {}), interfaces };
}

/** The network namespace of `pid` ("self" for bunlet's own). */
export function readNetworkStats(pid: number | "self", time: string, procRoot = "/proc"): NetworkStats {
  return networkStats(parseNetDevInterfaces(readFileSync(join(procRoot, String(pid), "net", "dev"), "utf8")), time);
}
