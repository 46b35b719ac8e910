// Sysctl and AppArmor admission as upstream's kubelet admit handlers decide it.
import { describe, expect, test } from "bun:test";
import type { KubePod } from "../../../src/pod/kuberuntime/types.ts";
import {
  SYSCTL_FORBIDDEN_REASON,
  appArmorAdmitHandler,
  createSysctlAllowlist,
  normalizeSysctlName,
  podSysctls,
  safeSysctlAllowlist,
  sysctlAdmitHandler,
} from "../../../src/pod/security/index.ts";

const pod = (spec: Partial<KubePod["spec"]>, annotations?: Record<string, string>): KubePod => ({
  metadata: { name: "web", namespace: "prod", uid: "u1", annotations },
  spec: { containers: [{ name: "app", image: "img" }], ...spec },
});
const withSysctls = (names: string[], extra: Partial<KubePod["spec"]> = {}) =>
  pod({ ...extra, securityContext: { sysctls: names.map((name) => ({ name, value: "1" })) } });

describe("sysctls", () => {
  test("the safe set follows the kernel version", () => {
    expect(safeSysctlAllowlist("3.10.0")).not.toContain("net.ipv4.ip_local_reserved_ports");
    expect(safeSysctlAllowlist("4.5.0")).toContain("net.ipv4.tcp_keepalive_time");
    expect(safeSysctlAllowlist("4.5.0")).not.toContain("net.ipv4.tcp_fin_timeout");
    expect(safeSysctlAllowlist("6.1.0-18-amd64")).toHaveLength(10);
  });

  test.each([
    ["safe sysctl", ["kernel.shm_rmid_forced"], {}, [], undefined],
    ["slash-separated safe sysctl", ["net/ipv4/tcp_syncookies"], {}, [], undefined],
    ["unsafe, not allowed", ["kernel.msgmax"], {}, [], 'forbidden sysctl: "kernel.msgmax" not allowlisted'],
    ["unsafe, allowed by name", ["kernel.msgmax"], {}, ["kernel.msgmax"], undefined],
    ["unsafe, allowed by prefix", ["net.core.somaxconn"], {}, ["net.core.*"], undefined],
    [
      "net sysctl in a hostNetwork pod",
      ["net.ipv4.tcp_syncookies"],
      { hostNetwork: true },
      [],
      'forbidden sysctl: "net.ipv4.tcp_syncookies" not allowed with host Net enabled',
    ],
    [
      "IPC sysctl in a hostIPC pod",
      ["kernel.shm_rmid_forced"],
      { hostIPC: true },
      [],
      'forbidden sysctl: "kernel.shm_rmid_forced" not allowed with host IPC enabled',
    ],
  ])("%s", (_n, names, spec, allowed, message) => {
    const r = sysctlAdmitHandler(allowed, "6.1.0")(withSysctls(names, spec), []);
    expect(r).toEqual(message ? { admit: false, reason: SYSCTL_FORBIDDEN_REASON, message } : { admit: true });
  });

  test("allowedUnsafeSysctls must be namespaced and well-formed (the kubelet refuses to start)", () => {
    expect(() => createSysctlAllowlist(["vm.swappiness"])).toThrow('the sysctls "vm.swappiness" are not known to be namespaced');
    expect(() => createSysctlAllowlist(["Bad Name"])).toThrow('sysctl "Bad Name" must have at most 253 characters');
  });

  test("names are normalized to dots for the sandbox", () => {
    expect(normalizeSysctlName("net/ipv4/conf/eno2.100/rp_filter")).toBe("net.ipv4.conf.eno2/100.rp_filter");
    expect(normalizeSysctlName("net.ipv4.conf.eno2/100.rp_filter")).toBe("net.ipv4.conf.eno2/100.rp_filter");
    expect(podSysctls(withSysctls(["net/ipv4/ping_group_range"]))).toEqual({ "net.ipv4.ping_group_range": "1" });
  });
});

describe("AppArmor admission", () => {
  const rd = { type: "RuntimeDefault" as const };
  test.each([
    ["no profile: admitted anywhere", pod({}), false, undefined],
    ["unconfined: admitted without AppArmor", pod({ securityContext: { appArmorProfile: { type: "Unconfined" } } }), false, undefined],
    ["annotation unconfined: admitted", pod({}, { "container.apparmor.security.beta.kubernetes.io/app": "unconfined" }), false, undefined],
    [
      "RuntimeDefault on a host without AppArmor",
      pod({ securityContext: { appArmorProfile: rd } }),
      false,
      "Cannot enforce AppArmor: AppArmor is not enabled on the host",
    ],
    [
      "annotation runtime/default on a host without AppArmor",
      pod({}, { "container.apparmor.security.beta.kubernetes.io/app": "runtime/default" }),
      false,
      "Cannot enforce AppArmor: AppArmor is not enabled on the host",
    ],
    ["RuntimeDefault on an AppArmor host", pod({ containers: [{ name: "app", image: "i", securityContext: { appArmorProfile: rd } }] }), true, undefined],
  ])("%s", (_n, p, enabled, message) => {
    expect(appArmorAdmitHandler(enabled)(p, [])).toEqual(message ? { admit: false, reason: "AppArmor", message } : { admit: true });
  });
});

describe("runAgent with a non-namespaced allowedUnsafeSysctls pattern", () => {
  test("exits 1 with upstream's error before starting anything", async () => {
    const { runAgent } = await import("../../../src/cli/run.ts");
    const errors: string[] = [];
    const code = await runAgent(["--allowed-unsafe-sysctls=vm.swappiness", "--fail-swap-on=false"], {
      printError: (l) => errors.push(l),
      readProcSwaps: () => "",
    });
    expect(code).toBe(1);
    expect(errors).toEqual(['error: failed to run Kubelet: the sysctls "vm.swappiness" are not known to be namespaced']);
  });
});
