// The image import directory wired to the node: containerd's API on the image service's socket, CRI
// pulls for .txt lists through the kubelet's image puller (so serializeImagePulls holds for them too),
// pods using an image that just arrived synced at once instead of at their next retry, and the
// directory's images handed to image GC and eviction's image reclaim as pinned. Started once the
// runtime answers, as image GC is.
import type { AgentComponent } from "../agent-component.ts";
import type { Clock } from "../clock.ts";
import type { CriClient } from "../cri/client.ts";
import { createContainerdClient } from "../cri/containerd.ts";
import { kv, log } from "../log.ts";
import { createImageImportDir, type ImageImportDir, type ImagePuller, normalizeImageRef } from "../pod/images/index.ts";
import type { PodLifecycle } from "../pod/lifecycle-types.ts";
import type { Pod } from "../pod/types.ts";

export interface ImageImportWiringInput {
  /** imageImportPath, "" → <rootDir>/images. */
  path: string;
  rootDir: string;
  /** The image service's endpoint (containerd's own API is served on the same socket). */
  endpoint: string;
  cri: CriClient;
  imagePuller: ImagePuller;
  lifecycle: () => PodLifecycle;
  clock: Clock;
  timeoutMs?: number;
}

export interface ImageImportWiring {
  dir: ImageImportDir;
  pinnedImages(): string[];
  component(runtimeReady: Promise<boolean>): AgentComponent;
}

/** Pure: whether the pod's containers (init and ephemeral too) use one of `names` (normalized references). */
export function podUsesImage(pod: Pod, names: ReadonlySet<string>): boolean {
  const spec = pod.spec;
  const containers = [...(spec?.initContainers ?? []), ...(spec?.containers ?? []), ...(spec?.ephemeralContainers ?? [])];
  return containers.some((c) => typeof c.image === "string" && names.has(normalizeImageRef(c.image)));
}

export function createImageImportWiring(input: ImageImportWiringInput): ImageImportWiring {
  const path = input.path || `${input.rootDir.replace(/\/$/, "")}/images`;
  const containerd = createContainerdClient({ endpoint: input.endpoint, timeoutMs: input.timeoutMs });
  const dir = createImageImportDir({
    path,
    containerd,
    cri: input.cri,
    pull: async (ref) => (await input.imagePuller.pull(() => input.cri.pullImage(ref), input.clock.now)).value,
    clock: input.clock,
    onImages: (names) => {
      const set = new Set(names);
      input.lifecycle().syncPodsNow((p) => podUsesImage(p, set));
    },
  });
  return {
    dir,
    pinnedImages: () => dir.pinnedImages(),
    component: (runtimeReady) => ({
      name: "image import",
      start() {
        void runtimeReady
          .then((ok) => {
            if (ok) return dir.start();
          })
          .catch((e) => log.error(`image import directory failed to start ${kv({ path, error: (e as Error).message })}`));
      },
      stop() {
        dir.stop();
        containerd.close();
      },
    }),
  };
}
