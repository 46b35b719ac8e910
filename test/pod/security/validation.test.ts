// Upstream pod validation of the security, namespace and DNS fields, on decoded static pods.
import { describe, expect, test } from "bun:test";
import { decodePod } from "../../../src/pod/manifest.ts";
import { validatePod } from "../../../src/pod/validation/index.ts";

const base = (spec: Record<string, unknown> = {}, container: Record<string, unknown> = {}, annotations?: Record<string, string>) => ({
  metadata: { name: "web", namespace: "default", uid: "u1", annotations },
  spec: { containers: [{ name: "app", image: "busybox", ...container }], ...spec },
});
const errorsOf = (obj: unknown) => {
  const r = decodePod(obj, "f.yaml");
  if (!r.pod) return r.errors.map((e) => `${e.field}: ${e.detail}`);
  return validatePod(r.pod).map((e) => `${e.field}: ${e.detail}`);
};

describe("accepted", () => {
  test("kubeadm's control-plane securityContext and the whole security surface decode and validate", () => {
    expect(
      errorsOf(
        base(
          {
            hostNetwork: true,
            hostPID: false,
            hostIPC: false,
            hostAliases: [{ ip: "10.0.0.1", hostnames: ["db.local", "db"] }],
            hostname: "web-0",
            subdomain: "web",
            dnsPolicy: "None",
            dnsConfig: { nameservers: ["10.96.0.10"], searches: ["svc.cluster.local."], options: [{ name: "ndots", value: "2" }] },
            securityContext: {
              seccompProfile: { type: "RuntimeDefault" },
              runAsNonRoot: true,
              runAsUser: 1000,
              fsGroup: 2000,
              supplementalGroups: [3000],
              sysctls: [{ name: "net.ipv4.ping_group_range", value: "0 1" }],
              seLinuxOptions: { level: "s0:c1,c2" },
            },
          },
          {
            securityContext: {
              capabilities: { add: ["NET_BIND_SERVICE"], drop: ["ALL"] },
              readOnlyRootFilesystem: true,
              allowPrivilegeEscalation: false,
              procMount: "Default",
              seccompProfile: { type: "Localhost", localhostProfile: "profiles/a.json" },
            },
          },
        ),
      ),
    ).toEqual([]);
  });

  test("hostUsers false: procMount Unmasked is allowed", () => {
    expect(errorsOf(base({ hostUsers: false }, { securityContext: { procMount: "Unmasked" } }))).toEqual([]);
  });

  test("dnsPolicy defaults to ClusterFirst, as upstream", () => {
    expect(decodePod(base(), "f").pod!.spec.dnsPolicy).toBe("ClusterFirst");
  });
});

describe("refused with upstream's messages", () => {
  test.each([
    [
      "seccomp Localhost without a profile",
      base({ securityContext: { seccompProfile: { type: "Localhost" } } }),
      "spec.securityContext.seccompProfile.localhostProfile: Required value: must be set when seccomp type is Localhost",
    ],
    [
      "seccomp profile escaping the root",
      base({}, { securityContext: { seccompProfile: { type: "Localhost", localhostProfile: "../x.json" } } }),
      `spec.containers[0].securityContext.seccompProfile.localhostProfile: Invalid value: "../x.json": must not contain '..'`,
    ],
    [
      "seccomp localhostProfile with RuntimeDefault",
      base({ securityContext: { seccompProfile: { type: "RuntimeDefault", localhostProfile: "a" } } }),
      `spec.securityContext.seccompProfile.localhostProfile: Invalid value: "a": can only be set when seccomp type is Localhost`,
    ],
    [
      "AppArmor Localhost without a profile",
      base({}, { securityContext: { appArmorProfile: { type: "Localhost" } } }),
      "spec.containers[0].securityContext.appArmorProfile.localhostProfile: Required value: must be set when AppArmor type is Localhost",
    ],
    [
      "AppArmor annotation naming no container",
      base({}, {}, { "container.apparmor.security.beta.kubernetes.io/nope": "runtime/default" }),
      `metadata.annotations[container.apparmor.security.beta.kubernetes.io/nope]: Invalid value: "nope": container not found`,
    ],
    [
      "AppArmor annotation with a bad value",
      base({}, {}, { "container.apparmor.security.beta.kubernetes.io/app": "bogus" }),
      `metadata.annotations[container.apparmor.security.beta.kubernetes.io/app]: Invalid value: "bogus": invalid AppArmor profile name: "bogus"`,
    ],
    [
      "AppArmor annotation and field disagree",
      base({}, { securityContext: { appArmorProfile: { type: "RuntimeDefault" } } }, { "container.apparmor.security.beta.kubernetes.io/app": "unconfined" }),
      "spec.containers[0].securityContext.appArmorProfile.type: Forbidden: apparmor type in annotation and field must match",
    ],
    [
      "duplicate sysctl",
      base({
        securityContext: {
          sysctls: [
            { name: "kernel.shm_rmid_forced", value: "1" },
            { name: "kernel.shm_rmid_forced", value: "0" },
          ],
        },
      }),
      `spec.securityContext.sysctls[1].name: Duplicate value: "kernel.shm_rmid_forced"`,
    ],
    [
      "procMount Unmasked",
      base({}, { securityContext: { procMount: "Unmasked" } }),
      'spec.containers[0].securityContext.procMount: Invalid value: "Unmasked": `hostUsers` must be false to use `Unmasked`',
    ],
    [
      "no_new_privs with privileged",
      base({}, { securityContext: { privileged: true, allowPrivilegeEscalation: false } }),
      `spec.containers[0].securityContext: Invalid value: "": cannot set \`allowPrivilegeEscalation\` to false and \`privileged\` to true`,
    ],
    [
      "shareProcessNamespace with hostPID",
      base({ hostPID: true, shareProcessNamespace: true }),
      `spec.shareProcessNamespace: Invalid value: "true": ShareProcessNamespace and HostPID cannot both be enabled`,
    ],
    [
      "hostAliases with a bad IP",
      base({ hostAliases: [{ ip: "db", hostnames: ["x"] }] }),
      `spec.hostAliases[0].ip: Invalid value: "db": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)`,
    ],
    ["dnsPolicy None without dnsConfig", base({ dnsPolicy: "None" }), "spec.dnsConfig: Required value: must provide `dnsConfig` when `dnsPolicy` is None"],
    [
      "more than 3 nameservers",
      base({ dnsConfig: { nameservers: ["1.1.1.1", "1.1.1.2", "1.1.1.3", "1.1.1.4"] } }),
      `spec.dnsConfig.nameservers: Invalid value: "1.1.1.1,1.1.1.2,1.1.1.3,1.1.1.4": must not have more than 3 nameservers`,
    ],
    [
      "runAsUser out of range",
      base({ securityContext: { runAsUser: 2147483648 } }),
      "spec.securityContext.runAsUser: must be between 0 and 2147483647, inclusive",
    ],
    ["hostUsers false with hostNetwork", base({ hostUsers: false, hostNetwork: true }), "spec.hostNetwork: Forbidden: when `hostUsers` is false"],
    ["hostUsers false with hostPID", base({ hostUsers: false, hostPID: true }), "spec.HostPID: Forbidden: when `hostUsers` is false"],
    ["hostUsers false with hostIPC", base({ hostUsers: false, hostIPC: true }), "spec.HostIPC: Forbidden: when `hostUsers` is false"],
    [
      "ephemeral containers in a static pod",
      base({ ephemeralContainers: [{ name: "debug", image: "busybox" }] }),
      "spec.ephemeralContainers: Forbidden: cannot be set on create",
    ],
  ])("%s", (_n, obj, want) => {
    expect(errorsOf(obj)).toContain(want);
  });
});
