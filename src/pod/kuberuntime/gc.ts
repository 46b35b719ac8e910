// Container and image garbage collection over the CRI, for the eviction manager's node-level reclaim
// (upstream containerGC.DeleteAllUnusedContainers and realImageGCManager.DeleteUnusedImages) before it
// evicts a pod under disk pressure. The periodic, threshold-driven image GC (src/pod/images/image-gc-manager.ts)
// lists and removes images through the same helpers.
import type { CriClient } from "../../cri/client.ts";
import type { Container, Image } from "../../cri/types.ts";
import { kv, log } from "../../log.ts";
import { CONTAINER_NAME_LABEL, POD_UID_LABEL } from "./labels.ts";

export interface GcResult {
  removed: string[];
  /** Image bytes freed (images only; the runtime does not report container layer sizes here). */
  freedBytes: number;
}

/**
 * Removes dead containers, keeping the newest dead one of each (pod, container) whose pod still has a
 * ready sandbox — its exit code and attempt feed the pod's status and restart count. Then removes
 * not-ready sandboxes that hold no containers any more.
 */
export async function deleteUnusedContainers(cri: CriClient): Promise<GcResult> {
  const [containers, sandboxes] = await Promise.all([cri.listContainers(), cri.listPodSandbox()]);
  const readySandboxes = new Set(sandboxes.filter((s) => s.state === "SANDBOX_READY").map((s) => s.id));
  const newestDead = new Map<string, Container>();
  const dead = containers.filter((c) => c.state === "CONTAINER_EXITED" || c.state === "CONTAINER_UNKNOWN");
  for (const c of dead) {
    const key = `${c.labels[POD_UID_LABEL] ?? c.podSandboxId}/${c.labels[CONTAINER_NAME_LABEL] ?? c.metadata?.name}`;
    const cur = newestDead.get(key);
    if (!cur || c.createdAt > cur.createdAt) newestDead.set(key, c);
  }
  const keep = new Set([...newestDead.values()].filter((c) => readySandboxes.has(c.podSandboxId)).map((c) => c.id));
  const removed: string[] = [];
  for (const c of dead) {
    if (keep.has(c.id)) continue;
    try {
      await cri.removeContainer(c.id);
      removed.push(c.id);
    } catch (e) {
      log.warn(`container gc: remove failed ${kv({ id: c.id.slice(0, 13), err: (e as Error).message })}`);
    }
  }
  const holding = new Set(containers.filter((c) => !removed.includes(c.id)).map((c) => c.podSandboxId));
  for (const s of sandboxes) {
    if (s.state === "SANDBOX_READY" || holding.has(s.id)) continue;
    try {
      await cri.removePodSandbox(s.id);
      removed.push(s.id);
    } catch (e) {
      log.warn(`container gc: remove sandbox failed ${kv({ id: s.id.slice(0, 13), err: (e as Error).message })}`);
    }
  }
  if (removed.length > 0) log.info(`container gc ${kv({ removed: removed.length })}`);
  return { removed, freedBytes: 0 };
}

/** An image as GC sees it: the names it goes by, whether a container uses it and whether it must stay. */
export interface ImageUsage {
  id: string;
  /** repoTags[0] or the id: how logs name it. */
  name: string;
  sizeBytes: number;
  /** Some container (running or not) was created from it. */
  inUse: boolean;
  /** Pinned by the runtime, or in `keep` (the sandbox image). */
  kept: boolean;
}

/** Pure: images with their use by `containers`; `keep` names (tag or id) are never collected. */
export function imageUsage(images: readonly Image[], containers: readonly Container[], keep: readonly string[] = []): ImageUsage[] {
  const used = new Set<string>();
  for (const c of containers) {
    if (c.imageRef) used.add(c.imageRef);
    if (c.imageId) used.add(c.imageId);
    if (c.image?.image) used.add(c.image.image);
  }
  const kept = new Set(keep);
  return images.map((img) => {
    const names = [img.id, ...img.repoTags, ...img.repoDigests];
    return {
      id: img.id,
      name: img.repoTags[0] ?? img.id,
      sizeBytes: img.size,
      inUse: names.some((n) => used.has(n)),
      kept: img.pinned || names.some((n) => kept.has(n)),
    };
  });
}

/** The runtime's images and their use, listed together. */
export async function listImageUsage(cri: Pick<CriClient, "listImages" | "listContainers">, keep: readonly string[] = []): Promise<ImageUsage[]> {
  const [images, containers] = await Promise.all([cri.listImages(), cri.listContainers()]);
  return imageUsage(images, containers, keep);
}

/** Removes one image; a failure is logged and reported as false (GC goes on with the next one). */
export async function removeImage(cri: Pick<CriClient, "removeImage">, img: Pick<ImageUsage, "id" | "name">): Promise<boolean> {
  try {
    await cri.removeImage(img.id);
    return true;
  } catch (e) {
    log.warn(`image gc: remove failed ${kv({ image: img.name, err: (e as Error).message })}`);
    return false;
  }
}

/**
 * Removes every image no container (running or not) uses, except pinned ones and `keep` (by tag or
 * id) — the sandbox (pause) image must be kept, or new pods cannot start without a registry.
 */
export async function deleteUnusedImages(cri: CriClient, keep: string[] = []): Promise<GcResult> {
  const removed: string[] = [];
  let freedBytes = 0;
  for (const img of await listImageUsage(cri, keep)) {
    if (img.inUse || img.kept) continue;
    if (await removeImage(cri, img)) {
      removed.push(img.name);
      freedBytes += img.sizeBytes;
    }
  }
  if (removed.length > 0) log.info(`image gc ${kv({ removed: removed.join(","), freedBytes })}`);
  return { removed, freedBytes };
}
