// AppArmor as upstream's kubelet applies it (pkg/security/apparmor, kuberuntime getAppArmorProfile):
// the container's appArmorProfile field, else the deprecated per-container annotation
// `container.apparmor.security.beta.kubernetes.io/<name>` (static pods keep annotations that were
// never synced to fields), else the pod's field. The runtime gets the profile and its deprecated
// string form. A pod that asks for confinement on a host without AppArmor is refused at admission
// (reason "AppArmor"), as upstream's appArmorAdmitHandler does.
import { readFileSync } from "node:fs";
import type { SecurityProfile } from "../../cri/types.ts";
import type { PodAdmitHandler } from "../lifecycle-types.ts";
import type { PodLike } from "../pod-like.ts";
import type { KubeContainer, KubePod, KubeSecurityProfile } from "../kuberuntime/types.ts";

export const APPARMOR_ANNOTATION_PREFIX = "container.apparmor.security.beta.kubernetes.io/";
export const APPARMOR_RUNTIME_DEFAULT = "runtime/default";
export const APPARMOR_UNCONFINED = "unconfined";
export const APPARMOR_LOCALHOST_PREFIX = "localhost/";

/** upstream getProfileFromPodAnnotations: undefined for a missing or invalid annotation. */
export function profileFromAnnotation(value: string | undefined): KubeSecurityProfile | undefined {
  if (value === undefined) return undefined;
  if (value === APPARMOR_RUNTIME_DEFAULT) return { type: "RuntimeDefault" };
  if (value === APPARMOR_UNCONFINED) return { type: "Unconfined" };
  if (value.startsWith(APPARMOR_LOCALHOST_PREFIX)) return { type: "Localhost", localhostProfile: value.slice(APPARMOR_LOCALHOST_PREFIX.length) };
  return undefined;
}

/** upstream apparmor.GetProfile. */
export function appArmorProfileOf(pod: KubePod, container: KubeContainer): KubeSecurityProfile | undefined {
  return (
    container.securityContext?.appArmorProfile ??
    profileFromAnnotation(pod.metadata.annotations?.[APPARMOR_ANNOTATION_PREFIX + container.name]) ??
    pod.spec.securityContext?.appArmorProfile
  );
}

/** The CRI profile and its deprecated string (upstream getAppArmorProfile); {} when none is asked for. */
export function appArmorForContainer(pod: KubePod, container: KubeContainer): { apparmor?: SecurityProfile; apparmorProfile?: string } {
  const p = appArmorProfileOf(pod, container);
  if (!p) return {};
  switch (p.type) {
    case "RuntimeDefault":
      return { apparmor: { profileType: "RuntimeDefault" }, apparmorProfile: APPARMOR_RUNTIME_DEFAULT };
    case "Unconfined":
      return { apparmor: { profileType: "Unconfined" }, apparmorProfile: APPARMOR_UNCONFINED };
    case "Localhost":
      if (!p.localhostProfile) throw new Error("missing localhost apparmor profile name");
      return { apparmor: { profileType: "Localhost", localhostRef: p.localhostProfile }, apparmorProfile: APPARMOR_LOCALHOST_PREFIX + p.localhostProfile };
  }
}

const allContainers = (pod: KubePod) => [...(pod.spec.initContainers ?? []), ...pod.spec.containers];

/** upstream apparmor isRequired: does any container ask for a profile other than unconfined? */
export function appArmorRequired(pod: KubePod): boolean {
  const confined = (p: KubeSecurityProfile | undefined) => p !== undefined && p.type !== "Unconfined";
  if (confined(pod.spec.securityContext?.appArmorProfile)) return true;
  if (allContainers(pod).some((c) => confined(c.securityContext?.appArmorProfile))) return true;
  return Object.entries(pod.metadata.annotations ?? {}).some(([k, v]) => k.startsWith(APPARMOR_ANNOTATION_PREFIX) && v !== APPARMOR_UNCONFINED);
}

/** upstream apparmor validator.Validate: why the pod's AppArmor cannot be enforced, or undefined. */
export function validateAppArmor(pod: KubePod, hostEnabled: boolean): string | undefined {
  if (!appArmorRequired(pod)) return undefined;
  if (!hostEnabled) return "AppArmor is not enabled on the host";
  for (const c of allContainers(pod)) {
    const p = appArmorProfileOf(pod, c);
    if (p?.type === "Localhost" && !p.localhostProfile?.trim()) return `invalid empty AppArmor profile name: ${JSON.stringify(p)}`;
  }
  return undefined;
}

/** runc's apparmor.IsEnabled: the kernel module reports Y. */
export function hostAppArmorEnabled(path = "/sys/module/apparmor/parameters/enabled"): boolean {
  try {
    return readFileSync(path, "utf8").startsWith("Y");
  } catch {
    return false;
  }
}

/** upstream appArmorAdmitHandler (checked once for the host, as upstream does at kubelet start). */
export function appArmorAdmitHandler(hostEnabled = hostAppArmorEnabled()): PodAdmitHandler {
  return (pod: PodLike) => {
    const err = validateAppArmor(pod as KubePod, hostEnabled);
    return err ? { admit: false, reason: "AppArmor", message: `Cannot enforce AppArmor: ${err}` } : { admit: true };
  };
}
