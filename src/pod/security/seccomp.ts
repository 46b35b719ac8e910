// The seccomp profile a container gets (upstream kuberuntime getSeccompProfile / fieldSeccompProfile):
// the container's seccompProfile, else the pod's, else RuntimeDefault when the kubelet's
// `seccompDefault` is on and Unconfined when it is off. Localhost profiles are files below the
// kubelet's seccomp profile root (<rootDir>/seccomp), handed to the runtime as an absolute path.
import { join } from "node:path";
import type { SecurityProfile } from "../../cri/types.ts";
import type { KubeSecurityProfile } from "../kuberuntime/types.ts";

export interface SeccompOptions {
  /** Directory of Localhost profiles (upstream: <rootDir>/seccomp). */
  seccompProfileRoot: string;
  /** KubeletConfiguration seccompDefault: RuntimeDefault for containers that name no profile. */
  seccompDefault: boolean;
}

/** upstream fieldSeccompProfile. Throws upstream's error for a Localhost profile without a name. */
export function fieldSeccompProfile(p: KubeSecurityProfile | undefined, opts: SeccompOptions): SecurityProfile {
  if (!p) return { profileType: opts.seccompDefault ? "RuntimeDefault" : "Unconfined" };
  if (p.type === "RuntimeDefault") return { profileType: "RuntimeDefault" };
  if (p.type === "Localhost") {
    if (!p.localhostProfile) throw new Error("localhostProfile must be set if seccompProfile type is Localhost.");
    return { profileType: "Localhost", localhostRef: join(opts.seccompProfileRoot, p.localhostProfile) };
  }
  return { profileType: "Unconfined" };
}

/** The container's profile first, then the pod's, then the default. */
export function seccompProfileFor(
  podProfile: KubeSecurityProfile | undefined,
  containerProfile: KubeSecurityProfile | undefined,
  opts: SeccompOptions,
): SecurityProfile {
  return fieldSeccompProfile(containerProfile ?? podProfile, opts);
}
