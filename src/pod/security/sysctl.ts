// Pod sysctls as upstream's kubelet admits them (pkg/kubelet/sysctl): the safe set, plus the
// kubelet's `allowedUnsafeSysctls` (names or prefixes ending in `*`), each a sysctl the kernel
// namespaces per pod (IPC or network). Anything else, or a network sysctl of a hostNetwork pod (IPC
// of a hostIPC pod), is refused at admission with reason SysctlForbidden. Admitted sysctls go to the
// runtime in LinuxPodSandboxConfig.sysctls, with `/`-separated names turned into dotted ones.
import { release } from "node:os";
import type { PodAdmitHandler } from "../lifecycle-types.ts";
import type { PodLike } from "../pod-like.ts";
import type { KubePod } from "../kuberuntime/types.ts";

/** upstream sysctl.ForbiddenReason. */
export const SYSCTL_FORBIDDEN_REASON = "SysctlForbidden";

/** upstream safeSysctls (v1.31): name and the first kernel that namespaces it. */
const SAFE_SYSCTLS: readonly { name: string; kernel?: [number, number] }[] = [
  { name: "kernel.shm_rmid_forced" },
  { name: "net.ipv4.ip_local_port_range" },
  { name: "net.ipv4.tcp_syncookies" },
  { name: "net.ipv4.ping_group_range" },
  { name: "net.ipv4.ip_unprivileged_port_start" },
  { name: "net.ipv4.ip_local_reserved_ports", kernel: [3, 16] },
  { name: "net.ipv4.tcp_keepalive_time", kernel: [4, 5] },
  { name: "net.ipv4.tcp_fin_timeout", kernel: [4, 6] },
  { name: "net.ipv4.tcp_keepalive_intvl", kernel: [4, 5] },
  { name: "net.ipv4.tcp_keepalive_probes", kernel: [4, 5] },
];

/** upstream SafeSysctlAllowlist for a kernel release ("6.1.0-18-amd64"). */
export function safeSysctlAllowlist(kernelRelease = release()): string[] {
  const m = /^(\d+)\.(\d+)/.exec(kernelRelease);
  const [major, minor] = m ? [Number(m[1]), Number(m[2])] : [0, 0];
  return SAFE_SYSCTLS.filter((s) => !s.kernel || (m && (major > s.kernel[0] || (major === s.kernel[0] && minor >= s.kernel[1])))).map((s) => s.name);
}

export type SysctlNamespace = "IPC" | "Net" | "";

/** upstream utilsysctl.NormalizeName: `net/ipv4/conf/eno2.100/rp_filter` → `net.ipv4.conf.eno2/100.rp_filter`. */
export function normalizeSysctlName(name: string): string {
  const i = name.search(/[./]/);
  if (i < 0 || name[i] === ".") return name;
  return name.replace(/[./]/g, (c) => (c === "." ? "/" : "."));
}

/** upstream utilsysctl.GetNamespace: the namespace, the name or prefix (without `*`), and whether it was a prefix. */
export function sysctlNamespace(pattern: string): { ns: SysctlNamespace; name: string; prefixed: boolean } {
  const prefixed = pattern.endsWith("*");
  const name = normalizeSysctlName(prefixed ? pattern.slice(0, -1) : pattern);
  let ns: SysctlNamespace = "";
  if (name === "kernel.sem" || name.startsWith("kernel.shm") || name.startsWith("kernel.msg") || name.startsWith("fs.mqueue.")) ns = "IPC";
  else if (name.startsWith("net.")) ns = "Net";
  return { ns, name, prefixed };
}

const SYSCTL_PATTERN = /^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[./])*(\*|[a-z0-9]([-_a-z0-9]*[a-z0-9])?)$/;

export interface SysctlAllowlist {
  /** Why the sysctl may not be set in this pod, or undefined. */
  check(name: string, hostNetwork: boolean, hostIPC: boolean): string | undefined;
}

/** upstream NewAllowlist: throws for a pattern that is malformed or not namespaced. */
export function createSysctlAllowlist(patterns: readonly string[]): SysctlAllowlist {
  const exact = new Map<string, SysctlNamespace>();
  const prefixes = new Map<string, SysctlNamespace>();
  for (const p of patterns) {
    if (p.length > 253 || !SYSCTL_PATTERN.test(p))
      throw new Error(`sysctl ${JSON.stringify(p)} must have at most 253 characters and match regex ${SYSCTL_PATTERN.source}`);
    const { ns, name, prefixed } = sysctlNamespace(p);
    if (ns === "") throw new Error(`the sysctls ${JSON.stringify(name)} are not known to be namespaced`);
    (prefixed ? prefixes : exact).set(name, ns);
  }
  const hostConflict = (name: string, ns: SysctlNamespace, hostNetwork: boolean, hostIPC: boolean) =>
    (ns === "IPC" && hostIPC) || (ns === "Net" && hostNetwork) ? `${JSON.stringify(name)} not allowed with host ${ns} enabled` : undefined;
  return {
    check(raw, hostNetwork, hostIPC) {
      const name = normalizeSysctlName(raw);
      const ns = exact.get(name);
      if (ns !== undefined) return hostConflict(name, ns, hostNetwork, hostIPC);
      for (const [prefix, pns] of prefixes) if (name.startsWith(prefix)) return hostConflict(name, pns, hostNetwork, hostIPC);
      return `${JSON.stringify(name)} not allowlisted`;
    },
  };
}

/** The sandbox's sysctls (names normalized to dots). */
export function podSysctls(pod: KubePod): Record<string, string> {
  const out: Record<string, string> = {};
  for (const s of pod.spec.securityContext?.sysctls ?? []) out[normalizeSysctlName(s.name)] = s.value;
  return out;
}

/** upstream patternAllowlist.Admit, over the safe set plus `allowedUnsafeSysctls`. */
export function sysctlAdmitHandler(allowedUnsafeSysctls: readonly string[] = [], kernelRelease?: string): PodAdmitHandler {
  const allowlist = createSysctlAllowlist([...safeSysctlAllowlist(kernelRelease), ...allowedUnsafeSysctls]);
  return (podLike: PodLike) => {
    const pod = podLike as KubePod;
    for (const s of pod.spec.securityContext?.sysctls ?? []) {
      const err = allowlist.check(s.name, pod.spec.hostNetwork === true, pod.spec.hostIPC === true);
      if (err) return { admit: false, reason: SYSCTL_FORBIDDEN_REASON, message: `forbidden sysctl: ${err}` };
    }
    return { admit: true };
  };
}
