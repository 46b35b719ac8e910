// Container and image garbage collection over the CRI, for the eviction manager's node-level reclaim
// (upstream containerGC.DeleteAllUnusedContainers and realImageGCManager.DeleteUnusedImages) before it
// evicts a pod under disk pressure.
import type { CriClient } from "../../cri/client.ts";
import type { Container } from "../../cri/types.ts";
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

/**
 * Removes every image no container (running or not) uses, except pinned ones and `keep` (by tag or
 * id) — the sandbox (pause) image must be kept, or new pods cannot start without a registry.
 */
export async function deleteUnusedImages(cri: CriClient, keep: string[] = []): Promise<GcResult> {
  const [images, containers] = await Promise.all([cri.listImages(), cri.listContainers()]);
  const used = new Set<string>();
  for (const c of containers) {
    if (c.imageRef) used.add(c.imageRef);
    if (c.imageId) used.add(c.imageId);
    if (c.image?.image) used.add(c.image.image);
  }
  const kept = new Set(keep);
  const removed: string[] = [];
  let freedBytes = 0;
  for (const img of images) {
    const names = [img.id, ...img.repoTags, ...img.repoDigests];
    if (img.pinned || names.some((n) => used.has(n) || kept.has(n))) continue;
    try {
      await cri.removeImage(img.id);
      removed.push(img.repoTags[0] ?? img.id);
      freedBytes += img.size;
    } catch (e) {
      log.warn(`image gc: remove failed ${kv({ image: img.repoTags[0] ?? img.id, err: (e as Error).message })}`);
    }
  }
  if (removed.length > 0) log.info(`image gc ${kv({ removed: removed.join(","), freedBytes })}`);
  return { removed, freedBytes };
}
