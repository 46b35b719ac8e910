// Pod and container security contexts → CRI (upstream pkg/securitycontext and kuberuntime
// security_context.go, security_context_others.go, kuberuntime_sandbox.go): the effective context
// (pod fields, overridden by the container's), capabilities, user and groups, seccomp, AppArmor,
// SELinux, no_new_privs, masked/read-only /proc paths, and the namespaces of the pod. Pure: the image
// user comes in from the caller's CRI ImageStatus.
import type { Image, LinuxContainerSecurityContext, LinuxSandboxSecurityContext, NamespaceMode, NamespaceOption } from "../../cri/types.ts";
import type { KubeContainer, KubePod, KubeSecurityContext } from "../kuberuntime/types.ts";
import { appArmorForContainer } from "./apparmor.ts";
import { type SeccompOptions, seccompProfileFor } from "./seccomp.ts";

export type { SeccompOptions } from "./seccomp.ts";

/** The user an image runs as (upstream getImageUser): a uid, or only a user name. */
export interface ImageUser {
  uid?: number;
  username: string;
}

/** upstream getImageUser over an ImageStatus reply: uid, else the user name, else root. */
export function imageUserOf(image: Pick<Image, "uid" | "username"> | null | undefined): ImageUser {
  if (image?.uid) return { uid: image.uid.value, username: "" };
  if (image?.username) return { username: image.username };
  return { uid: 0, username: "" };
}

/** /proc paths masked and made read-only for every container with the Default procMount (upstream securitycontext). */
export const DEFAULT_MASKED_PATHS = [
  "/proc/asound",
  "/proc/acpi",
  "/proc/kcore",
  "/proc/keys",
  "/proc/latency_stats",
  "/proc/timer_list",
  "/proc/timer_stats",
  "/proc/sched_debug",
  "/proc/scsi",
  "/sys/firmware",
  "/sys/devices/virtual/powercap",
];
export const DEFAULT_READONLY_PATHS = ["/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"];

/** upstream DetermineEffectiveSecurityContext: the pod's user/group/SELinux fields, overridden field by field by the container's. */
export function effectiveSecurityContext(pod: KubePod, container: KubeContainer): KubeSecurityContext {
  const psc = pod.spec.securityContext;
  const fromPod: KubeSecurityContext = {};
  if (psc?.seLinuxOptions) fromPod.seLinuxOptions = psc.seLinuxOptions;
  if (psc?.runAsUser !== undefined) fromPod.runAsUser = psc.runAsUser;
  if (psc?.runAsGroup !== undefined) fromPod.runAsGroup = psc.runAsGroup;
  if (psc?.runAsNonRoot !== undefined) fromPod.runAsNonRoot = psc.runAsNonRoot;
  const out: KubeSecurityContext = { ...fromPod };
  for (const [k, v] of Object.entries(container.securityContext ?? {})) if (v !== undefined) (out as Record<string, unknown>)[k] = v;
  return out;
}

/** upstream format.Pod: name_namespace(uid). */
const formatPod = (pod: KubePod) => `${pod.metadata.name}_${pod.metadata.namespace ?? ""}(${pod.metadata.uid ?? ""})`;

/** upstream verifyRunAsNonRoot: the CreateContainerConfigError message, or undefined when the container may run. */
export function verifyRunAsNonRoot(pod: KubePod, container: KubeContainer, user: ImageUser): string | undefined {
  const sc = effectiveSecurityContext(pod, container);
  if (sc.runAsNonRoot !== true) return undefined;
  const where = `(pod: ${JSON.stringify(formatPod(pod))}, container: ${container.name})`;
  if (sc.runAsUser !== undefined) return sc.runAsUser === 0 ? `container's runAsUser breaks non-root policy ${where}` : undefined;
  if (user.uid === undefined && user.username)
    return `container has runAsNonRoot and image has non-numeric user (${user.username}), cannot verify user is non-root ${where}`;
  if (user.uid === 0) return `container has runAsNonRoot and image will run as root ${where}`;
  if (user.uid !== undefined && (user.uid < 0 || user.uid > 2147483647))
    return `container has runAsNonRoot and image has an invalid user id (${user.uid}). (Must be 1-(2147483647)): must be between 0 and 2147483647, inclusive ${where}`;
  return undefined;
}

/** upstream NamespacesForPod: hostNetwork/hostIPC/hostPID → NODE; shareProcessNamespace → one PID namespace per pod. */
export function namespacesForPod(pod: KubePod): NamespaceOption {
  const pid: NamespaceMode = pod.spec.hostPID ? "NODE" : pod.spec.shareProcessNamespace ? "POD" : "CONTAINER";
  return { network: pod.spec.hostNetwork ? "NODE" : "POD", pid, ipc: pod.spec.hostIPC ? "NODE" : "POD" };
}

/** fsGroup, then supplementalGroups (upstream order); undefined when neither is set. */
function podSupplementalGroups(pod: KubePod): number[] | undefined {
  const psc = pod.spec.securityContext;
  const groups = [...(psc?.fsGroup !== undefined ? [psc.fsGroup] : []), ...(psc?.supplementalGroups ?? [])];
  return groups.length > 0 ? groups : undefined;
}

const allContainers = (pod: KubePod) => [...(pod.spec.initContainers ?? []), ...pod.spec.containers];

/** upstream generatePodSandboxLinuxConfig's security context (the sandbox always runs RuntimeDefault seccomp). */
export function sandboxSecurityContext(pod: KubePod): LinuxSandboxSecurityContext {
  const psc = pod.spec.securityContext;
  const groups = podSupplementalGroups(pod);
  return {
    namespaceOptions: namespacesForPod(pod),
    privileged: allContainers(pod).some((c) => c.securityContext?.privileged === true),
    seccomp: { profileType: "RuntimeDefault" },
    ...(psc?.runAsUser !== undefined ? { runAsUser: { value: psc.runAsUser } } : {}),
    ...(psc?.runAsGroup !== undefined ? { runAsGroup: { value: psc.runAsGroup } } : {}),
    ...(groups ? { supplementalGroups: groups } : {}),
    ...(psc?.seLinuxOptions ? { selinuxOptions: { ...psc.seLinuxOptions } } : {}),
  };
}

/**
 * upstream determineEffectiveSecurityContext: the container's CRI security context. `user` is the
 * image's (ImageStatus); it is the user when the pod names none. Throws for an unusable profile.
 */
export function containerSecurityContext(
  pod: KubePod,
  container: KubeContainer,
  user: ImageUser | undefined,
  seccomp: SeccompOptions,
): LinuxContainerSecurityContext {
  const sc = effectiveSecurityContext(pod, container);
  const out: LinuxContainerSecurityContext = {
    privileged: sc.privileged === true,
    readonlyRootfs: sc.readOnlyRootFilesystem === true,
    noNewPrivs: sc.allowPrivilegeEscalation === false,
    namespaceOptions: namespacesForPod(pod),
    seccomp: seccompProfileFor(pod.spec.securityContext?.seccompProfile, container.securityContext?.seccompProfile, seccomp),
    ...appArmorForContainer(pod, container),
  };
  if (sc.capabilities) out.capabilities = { addCapabilities: [...(sc.capabilities.add ?? [])], dropCapabilities: [...(sc.capabilities.drop ?? [])] };
  if (sc.seLinuxOptions) out.selinuxOptions = { ...sc.seLinuxOptions };
  if (sc.runAsUser !== undefined) out.runAsUser = { value: sc.runAsUser };
  else if (user) {
    if (user.uid !== undefined) out.runAsUser = { value: user.uid };
    if (user.username) out.runAsUsername = user.username;
  }
  if (sc.runAsGroup !== undefined) out.runAsGroup = { value: sc.runAsGroup };
  const groups = podSupplementalGroups(pod);
  if (groups) out.supplementalGroups = groups;
  const unmasked = sc.procMount === "Unmasked";
  out.maskedPaths = unmasked ? [] : [...DEFAULT_MASKED_PATHS];
  out.readonlyPaths = unmasked ? [] : [...DEFAULT_READONLY_PATHS];
  return out;
}
