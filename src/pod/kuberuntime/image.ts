// Images for container starts (upstream kuberuntime_image.go PullImage with the pod's pull secrets, and
// images/image_manager.go EnsureImageExists with its pull back-off): plain functions over the shared
// KubeRuntimeContext (context.ts), whose imageBackOff is keyed by pod UID and image, and whose
// imagePuller runs the pulls one at a time or a few at once (serializeImagePulls, maxParallelImagePulls).
import type { Image as CriImage, PodSandboxConfig } from "../../cri/types.ts";
import { createDockerKeyring, dockerConfigsFromSecrets } from "../../credentialprovider/index.ts";
import { reasons } from "../../events/index.ts";
import { kv, log } from "../../log.ts";
import { podKey, podUid } from "../pod-like.ts";
import { lookupSecret } from "../volumes/index.ts";
import type { KubeRuntimeContext } from "./context.ts";
import type { KubeContainer, KubePod } from "./types.ts";

/**
 * upstream kuberuntime PullImage with pull secrets: the keyring of the pod's imagePullSecrets (a
 * secret that cannot be read is logged and skipped, as getPullSecretsForPod does) gives the
 * credentials for the image, tried in order until one pull succeeds; none → an anonymous pull.
 */
export async function pullWithSecrets(ctx: KubeRuntimeContext, pod: KubePod, image: string, sandboxConfig: PodSandboxConfig): Promise<string> {
  const { cri } = ctx;
  const objects = ctx.podObjects.get(podUid(pod));
  const secrets: { name: string; data?: Record<string, string> }[] = [];
  for (const ref of pod.spec.imagePullSecrets ?? []) {
    if (!ref.name) continue;
    try {
      secrets.push({ name: ref.name, data: lookupSecret(objects, ref.name).data });
    } catch (e) {
      log.warn(`Unable to retrieve pull secret, the image pull may not succeed. ${kv({ pod: podKey(pod), secret: ref.name, error: (e as Error).message })}`);
    }
  }
  const creds =
    secrets.length > 0
      ? createDockerKeyring(dockerConfigsFromSecrets(secrets, (e) => log.warn(`pull secret skipped ${kv({ error: e.message })}`))).lookup(image)
      : [];
  if (creds.length === 0) return cri.pullImage(image, undefined, sandboxConfig);
  const errors: string[] = [];
  for (const auth of creds) {
    try {
      return await cri.pullImage(image, auth, sandboxConfig);
    } catch (e) {
      errors.push((e as Error).message);
    }
  }
  throw new Error(errors.length === 1 ? errors[0] : `[${errors.join(", ")}]`);
}

/** One EnsureImageExists call: the container's image for the pod's sandbox. */
export interface EnsureImageRequest {
  pod: KubePod;
  container: KubeContainer;
  sandboxConfig: PodSandboxConfig;
  uid: string;
  /** Called right before a pull starts (a pull never holds a start slot). */
  beforePull?: () => void;
}

/**
 * Upstream EnsureImageExists: Never → the image must be present (ErrImageNeverPull); IfNotPresent →
 * pulled when absent; Always → pulled every time a container starts (there is no registry offline,
 * so a present image still fails with ErrImagePull, then ImagePullBackOff while the back-off runs).
 */
export async function ensureImage(ctx: KubeRuntimeContext, req: EnsureImageRequest): Promise<{ id: string; present?: CriImage }> {
  const { pod, container, sandboxConfig, uid, beforePull } = req;
  const { cri, now, imageBackOff } = ctx;
  const image = container.image as string;
  const policy = container.imagePullPolicy ?? "IfNotPresent";
  const event = (type: "Normal" | "Warning", reason: string, message: string) => ctx.containerEvent(pod, container.name, type, reason, message);
  if (policy !== "Always") {
    const present = await cri.imageStatus(image);
    if (present) {
      event("Normal", reasons.PulledImage, `Container image "${image}" already present on machine`);
      return { id: present.id, present };
    }
    if (policy === "Never") {
      const message = `Container image "${image}" is not present with pull policy of Never`;
      event("Warning", reasons.ErrImageNeverPullPolicy, message);
      throw Object.assign(new Error(message), { reason: "ErrImageNeverPull" });
    }
  }
  const key = `${uid}_${image}`;
  if (imageBackOff.isInBackOff(key, now())) {
    const message = `Back-off pulling image "${image}"`;
    event("Normal", reasons.BackOffPullImage, message);
    throw Object.assign(new Error(message), { reason: "ImagePullBackOff" });
  }
  beforePull?.();
  event("Normal", reasons.PullingImage, `Pulling image "${image}"`);
  try {
    const { value: id, timing } = await ctx.imagePuller.pull(() => pullWithSecrets(ctx, pod, image, sandboxConfig), now);
    const took = goDuration(timing.pulledMs);
    const total = goDuration(timing.waitedMs + timing.pulledMs);
    event("Normal", reasons.PulledImage, `Successfully pulled image "${image}" in ${took} (${total} including waiting)`);
    return { id };
  } catch (e) {
    imageBackOff.gc(now());
    imageBackOff.next(key, now());
    log.warn(`Failed to pull image ${kv({ image, policy, err: (e as Error).message })}`);
    event("Warning", reasons.FailedToPullImage, `Failed to pull image "${image}": ${(e as Error).message}`);
    // The waiting message is the runtime's error itself, as upstream's evalCRIPullErr fallback.
    throw Object.assign(new Error((e as Error).message), { reason: "ErrImagePull" });
  }
}

/** Go's time.Duration String for the "Successfully pulled image" message: 512ms, 1.234s, 2m3.5s. */
export function goDuration(ms: number): string {
  if (ms < 1000) return `${+ms.toFixed(3)}ms`;
  const s = ms / 1000;
  if (s < 60) return `${+s.toFixed(3)}s`;
  const m = Math.floor(s / 60);
  return `${m}m${+(s - m * 60).toFixed(3)}s`;
}
