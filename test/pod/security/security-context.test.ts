// Pure mapping of pod/container security fields to CRI, table-driven (upstream's
// security_context_test.go, helpers_test.go and NamespacesForPod cases).
import { describe, expect, test } from "bun:test";
import type { KubeContainer, KubePod } from "../../../src/pod/kuberuntime/types.ts";
import {
  DEFAULT_MASKED_PATHS,
  DEFAULT_READONLY_PATHS,
  containerSecurityContext,
  effectiveSecurityContext,
  fieldSeccompProfile,
  imageUserOf,
  namespacesForPod,
  sandboxSecurityContext,
  verifyRunAsNonRoot,
} from "../../../src/pod/security/index.ts";

const seccomp = { seccompProfileRoot: "/var/lib/kubelet/seccomp", seccompDefault: false };
const c = (securityContext?: KubeContainer["securityContext"], name = "app"): KubeContainer => ({ name, image: "img", securityContext });
const pod = (spec: Partial<KubePod["spec"]> = {}, containers = [c()], annotations?: Record<string, string>): KubePod => ({
  metadata: { name: "web", namespace: "prod", uid: "u1", annotations },
  spec: { containers, ...spec },
});

describe("seccomp (upstream fieldSeccompProfile / getSeccompProfile)", () => {
  test.each([
    ["no profile, seccompDefault off → Unconfined", undefined, false, { profileType: "Unconfined" }],
    ["no profile, seccompDefault on → RuntimeDefault", undefined, true, { profileType: "RuntimeDefault" }],
    ["RuntimeDefault", { type: "RuntimeDefault" as const }, false, { profileType: "RuntimeDefault" }],
    ["Unconfined even with seccompDefault", { type: "Unconfined" as const }, true, { profileType: "Unconfined" }],
    [
      "Localhost → absolute path below the profile root",
      { type: "Localhost" as const, localhostProfile: "profiles/audit.json" },
      false,
      { profileType: "Localhost", localhostRef: "/var/lib/kubelet/seccomp/profiles/audit.json" },
    ],
  ])("%s", (_name, profile, def, want) => {
    expect(fieldSeccompProfile(profile, { ...seccomp, seccompDefault: def })).toEqual(want as never);
  });

  test("Localhost without a name is upstream's error", () => {
    expect(() => fieldSeccompProfile({ type: "Localhost" }, seccomp)).toThrow("localhostProfile must be set if seccompProfile type is Localhost.");
  });

  test.each([
    ["container wins over pod", { type: "RuntimeDefault" as const }, { type: "Unconfined" as const }, "Unconfined"],
    ["pod applies when the container names none", { type: "RuntimeDefault" as const }, undefined, "RuntimeDefault"],
  ])("%s", (_n, podProfile, containerProfile, want) => {
    const p = pod({ securityContext: { seccompProfile: podProfile } }, [c(containerProfile ? { seccompProfile: containerProfile } : undefined)]);
    expect(containerSecurityContext(p, p.spec.containers[0]!, undefined, seccomp).seccomp?.profileType).toBe(want as never);
  });
});

describe("namespaces (upstream NamespacesForPod)", () => {
  test.each([
    ["defaults", {}, { network: "POD", pid: "CONTAINER", ipc: "POD" }],
    ["hostNetwork", { hostNetwork: true }, { network: "NODE", pid: "CONTAINER", ipc: "POD" }],
    ["hostPID", { hostPID: true }, { network: "POD", pid: "NODE", ipc: "POD" }],
    ["hostIPC", { hostIPC: true }, { network: "POD", pid: "CONTAINER", ipc: "NODE" }],
    ["shareProcessNamespace", { shareProcessNamespace: true }, { network: "POD", pid: "POD", ipc: "POD" }],
    ["hostPID wins over shareProcessNamespace", { hostPID: true, shareProcessNamespace: true }, { network: "POD", pid: "NODE", ipc: "POD" }],
  ])("%s", (_n, spec, want) => {
    const p = pod(spec as Partial<KubePod["spec"]>);
    expect(namespacesForPod(p)).toEqual(want as never);
    expect(sandboxSecurityContext(p).namespaceOptions).toEqual(want as never);
    expect(containerSecurityContext(p, p.spec.containers[0]!, undefined, seccomp).namespaceOptions).toEqual(want as never);
  });
});

describe("container security context", () => {
  test("capabilities, SELinux, privileged, read-only rootfs, no_new_privs, groups", () => {
    const p = pod(
      { securityContext: { runAsUser: 1000, runAsGroup: 3000, fsGroup: 2000, supplementalGroups: [4000, 5000], seLinuxOptions: { level: "s0:c1" } } },
      [c({ capabilities: { add: ["NET_ADMIN"], drop: ["ALL"] }, readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, runAsUser: 1001 })],
    );
    expect(containerSecurityContext(p, p.spec.containers[0]!, { uid: 0, username: "" }, seccomp)).toEqual({
      privileged: false,
      readonlyRootfs: true,
      noNewPrivs: true,
      namespaceOptions: { network: "POD", pid: "CONTAINER", ipc: "POD" },
      seccomp: { profileType: "Unconfined" },
      capabilities: { addCapabilities: ["NET_ADMIN"], dropCapabilities: ["ALL"] },
      selinuxOptions: { level: "s0:c1" },
      runAsUser: { value: 1001 },
      runAsGroup: { value: 3000 },
      supplementalGroups: [2000, 4000, 5000],
      maskedPaths: DEFAULT_MASKED_PATHS,
      readonlyPaths: DEFAULT_READONLY_PATHS,
    });
  });

  test.each([
    ["allowPrivilegeEscalation unset → no no_new_privs", {}, false],
    ["allowPrivilegeEscalation true → no no_new_privs", { allowPrivilegeEscalation: true }, false],
    ["allowPrivilegeEscalation false → no_new_privs", { allowPrivilegeEscalation: false }, true],
  ])("%s", (_n, sc, want) => {
    const p = pod({}, [c(sc)]);
    expect(containerSecurityContext(p, p.spec.containers[0]!, undefined, seccomp).noNewPrivs).toBe(want);
  });

  test.each([
    ["image uid when the pod names no user", {}, { uid: 65534, username: "" }, { runAsUser: { value: 65534 } }],
    ["image user name passed as run_as_username", {}, { username: "nobody" }, { runAsUsername: "nobody" }],
    ["the pod's runAsUser wins over the image", { runAsUser: 7 }, { uid: 65534, username: "" }, { runAsUser: { value: 7 } }],
  ])("%s", (_n, psc, user, want) => {
    const p = pod({ securityContext: psc });
    const sc = containerSecurityContext(p, p.spec.containers[0]!, user, seccomp);
    expect({ runAsUser: sc.runAsUser, runAsUsername: sc.runAsUsername }).toEqual({ runAsUser: undefined, runAsUsername: undefined, ...want });
  });

  test("procMount Unmasked clears the masked and read-only paths", () => {
    const p = pod({}, [c({ procMount: "Unmasked" })]);
    const sc = containerSecurityContext(p, p.spec.containers[0]!, undefined, seccomp);
    expect([sc.maskedPaths, sc.readonlyPaths]).toEqual([[], []]);
  });

  test.each([
    ["field RuntimeDefault", undefined, { appArmorProfile: { type: "RuntimeDefault" as const } }, { profileType: "RuntimeDefault" }, "runtime/default"],
    [
      "annotation localhost/",
      { "container.apparmor.security.beta.kubernetes.io/app": "localhost/k8s-nginx" },
      undefined,
      { profileType: "Localhost", localhostRef: "k8s-nginx" },
      "localhost/k8s-nginx",
    ],
    ["annotation unconfined", { "container.apparmor.security.beta.kubernetes.io/app": "unconfined" }, undefined, { profileType: "Unconfined" }, "unconfined"],
    [
      "container field wins over the annotation",
      { "container.apparmor.security.beta.kubernetes.io/app": "unconfined" },
      { appArmorProfile: { type: "RuntimeDefault" as const } },
      { profileType: "RuntimeDefault" },
      "runtime/default",
    ],
  ])("AppArmor: %s", (_n, annotations, sc, want, deprecated) => {
    const p = pod({}, [c(sc)], annotations);
    const out = containerSecurityContext(p, p.spec.containers[0]!, undefined, seccomp);
    expect(out.apparmor).toEqual(want as never);
    expect(out.apparmorProfile).toBe(deprecated);
  });

  test("effective context: container fields override the pod's, field by field", () => {
    const p = pod({ securityContext: { runAsUser: 1, runAsGroup: 2, runAsNonRoot: true } }, [c({ runAsUser: 5 })]);
    expect(effectiveSecurityContext(p, p.spec.containers[0]!)).toEqual({ runAsUser: 5, runAsGroup: 2, runAsNonRoot: true });
  });
});

describe("sandbox security context (upstream generatePodSandboxLinuxConfig)", () => {
  test("RuntimeDefault seccomp, privileged if any container is, user/group/groups/SELinux of the pod", () => {
    const p = pod({
      securityContext: { runAsUser: 1000, runAsGroup: 1000, fsGroup: 2000, supplementalGroups: [3000], seLinuxOptions: { type: "spc_t" } },
      initContainers: [c({ privileged: true }, "init")],
    });
    expect(sandboxSecurityContext(p)).toEqual({
      namespaceOptions: { network: "POD", pid: "CONTAINER", ipc: "POD" },
      privileged: true,
      seccomp: { profileType: "RuntimeDefault" },
      runAsUser: { value: 1000 },
      runAsGroup: { value: 1000 },
      supplementalGroups: [2000, 3000],
      selinuxOptions: { type: "spc_t" },
    });
  });
});

describe("runAsNonRoot (upstream verifyRunAsNonRoot)", () => {
  const where = '(pod: "web_prod(u1)", container: app)';
  test.each([
    ["not asked", {}, {}, { uid: 0, username: "" }, undefined],
    ["image runs as root", { runAsNonRoot: true }, {}, { uid: 0, username: "" }, `container has runAsNonRoot and image will run as root ${where}`],
    [
      "image has a non-numeric user",
      { runAsNonRoot: true },
      {},
      { username: "nginx" },
      `container has runAsNonRoot and image has non-numeric user (nginx), cannot verify user is non-root ${where}`,
    ],
    ["image runs as uid 1000", { runAsNonRoot: true }, {}, { uid: 1000, username: "" }, undefined],
    ["runAsUser 0 breaks it", { runAsNonRoot: true }, { runAsUser: 0 }, { uid: 1000, username: "" }, `container's runAsUser breaks non-root policy ${where}`],
    ["runAsUser 1000 satisfies it over a root image", { runAsNonRoot: true }, { runAsUser: 1000 }, { uid: 0, username: "" }, undefined],
    ["container runAsNonRoot false overrides the pod's", { runAsNonRoot: true }, { runAsNonRoot: false }, { uid: 0, username: "" }, undefined],
  ])("%s", (_n, psc, csc, user, want) => {
    const p = pod({ securityContext: psc }, [c(csc)]);
    expect(verifyRunAsNonRoot(p, p.spec.containers[0]!, user)).toBe(want as never);
  });

  test.each([
    ["uid from ImageStatus", { uid: { value: 1000 }, username: "" }, { uid: 1000, username: "" }],
    ["uid 0", { uid: { value: 0 }, username: "" }, { uid: 0, username: "" }],
    ["only a user name", { uid: null, username: "nginx" }, { username: "nginx" }],
    ["nothing: root", { uid: null, username: "" }, { uid: 0, username: "" }],
    ["no image: root", null, { uid: 0, username: "" }],
  ])("image user: %s", (_n, image, want) => {
    expect(imageUserOf(image)).toEqual(want);
  });
});
