// reservedSystemCPUs (--reserved-cpus), as upstream cmd/kubelet/app/server.go handles it: when set it
// overrides the cpu of kubeReserved and systemReserved — systemReserved.cpu becomes the number of CPUs
// named, kubeReserved.cpu goes — so node allocatable and the CPU manager's reservation follow it.
import { parseCPUSet } from "./cpuset.ts";
import type { KubeletConfiguration } from "./kubelet-config.ts";

/** Upstream ValidateKubeletConfiguration's checks of reservedSystemCPUs: the messages, or none. */
export function reservedSystemCPUsProblems(kc: Pick<KubeletConfiguration, "reservedSystemCPUs" | "systemReservedCgroup" | "kubeReservedCgroup">): string[] {
  const v = kc.reservedSystemCPUs;
  if (!v) return [];
  const out: string[] = [];
  if (kc.systemReservedCgroup || kc.kubeReservedCgroup)
    out.push(
      "invalid configuration: can't use reservedSystemCPUs (--reserved-cpus) with systemReservedCgroup (--system-reserved-cgroup) or kubeReservedCgroup (--kube-reserved-cgroup)",
    );
  try {
    parseCPUSet(v);
  } catch (e) {
    out.push(`invalid configuration: unable to parse reservedSystemCPUs (--reserved-cpus) ${v}, error: ${(e as Error).message}`);
  }
  return out;
}

/** The configuration with reservedSystemCPUs' override of the reserved cpu applied (unchanged when unset or empty). */
export function withReservedSystemCPUs<T extends Pick<KubeletConfiguration, "reservedSystemCPUs" | "systemReserved" | "kubeReserved">>(kc: T): T {
  const n = kc.reservedSystemCPUs ? parseCPUSet(kc.reservedSystemCPUs).length : 0;
  if (n === 0) return kc;
  const { cpu: _dropped, ...kubeReserved } = kc.kubeReserved ?? {};
  return { ...kc, kubeReserved, systemReserved: { ...(kc.systemReserved ?? {}), cpu: String(n) } };
}
