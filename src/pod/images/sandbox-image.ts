// The runtime's sandbox (pause) image, which image garbage collection and the eviction manager's image
// reclaim keep: without it new pods could not start on a node cut off from its registry. containerd
// reports it in the "config" of its CRI Status info.
import type { CriClient } from "../../cri/client.ts";

/** Images kept by image GC: the runtime's sandbox (pause) image, or new pods could not start offline. */
export async function sandboxImages(cri: Pick<CriClient, "status">): Promise<string[]> {
  try {
    const st = await cri.status(true);
    const cfg = JSON.parse(st.info?.config ?? "{}") as { sandboxImage?: string };
    return cfg.sandboxImage ? [cfg.sandboxImage] : [];
  } catch {
    return [];
  }
}
