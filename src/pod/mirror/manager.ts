// Mirror pods in the API (upstream: Kubelet.SyncPod's mirror pod block, deleteOrphanedMirrorPods
// in HandlePodCleanups, and basicMirrorClient). One reconcile, run on every change of the API's
// mirror pods and every `periodMs`:
//   static pod, no mirror → create it (once the Node is registered and not being deleted)
//   mirror being deleted, or its config.mirror hash ≠ the static pod's → DELETE (grace 0, UID
//     precondition) and create the new one
//   mirror whose static pod is gone (and no longer terminating) → DELETE (grace 0)
import type { Clock } from "../../clock.ts";
import { every } from "../../clock.ts";
import { isAlreadyExists, isConflict, isNotFound, type KubeClient, type Node } from "../../kube/index.ts";
import { kv, log } from "../../log.ts";
import type { Pod } from "../types.ts";
import { buildMirrorPod, isMirrorPodOf, podFullName } from "./mirror-pod.ts";
import { podKey } from "../pod-like.ts";

export interface MirrorPodManagerOptions {
  client: KubeClient;
  clock: Clock;
  /** Static pods the pod manager holds (file and http sources). */
  staticPods: () => Pod[];
  /** Mirror pods as the API pod source last listed them. */
  mirrorPods: () => Pod[];
  /** The Node as last read from the API server (UID for the owner reference). */
  node: () => Node | undefined;
  /** A static pod of this full name is still stopping: its mirror stays until it is done. */
  staticPodTerminating?: (fullName: string) => boolean;
  periodMs?: number;
}

export interface MirrorPodManager {
  start(): void;
  stop(): void;
  syncOnce(): Promise<void>;
  /** The current mirror of a static pod (same name, same hash, not being deleted). */
  mirrorOf(staticPod: Pod): Pod | undefined;
}

export function createMirrorPodManager(o: MirrorPodManagerOptions): MirrorPodManager {
  let stopPeriodic: (() => void) | undefined;
  let running: Promise<void> | undefined;
  let again = false;

  async function createMirror(pod: Pod): Promise<void> {
    const node = o.node();
    if (!node?.metadata.uid) return log.debug(`No need to create a mirror pod, since failed to get node info from the cluster ${kv({ pod: podKey(pod) })}`);
    if ((node.metadata as { deletionTimestamp?: string }).deletionTimestamp)
      return log.debug(`No need to create a mirror pod, since node has been removed from the cluster ${kv({ node: node.metadata.name })}`);
    try {
      await o.client.request({
        method: "POST",
        path: `/api/v1/namespaces/${pod.metadata.namespace ?? "default"}/pods`,
        body: buildMirrorPod(pod, { name: node.metadata.name, uid: node.metadata.uid }),
      });
      log.info(`Created a mirror pod for static pod ${kv({ pod: podKey(pod), podUID: pod.metadata.uid })}`);
    } catch (e) {
      if (isAlreadyExists(e)) return; // the watch has not shown it yet
      log.error(`Failed creating a mirror pod ${kv({ pod: podKey(pod), error: (e as Error).message })}`);
    }
  }

  /** DeleteMirrorPod: true when deleted; a missing pod or another UID is no error. */
  async function deleteMirror(mirror: Pod, withUid: boolean): Promise<boolean> {
    const path = `/api/v1/namespaces/${mirror.metadata.namespace ?? "default"}/pods/${mirror.metadata.name}`;
    try {
      await o.client.request({
        method: "DELETE",
        path,
        body: { kind: "DeleteOptions", apiVersion: "v1", gracePeriodSeconds: 0, ...(withUid ? { preconditions: { uid: mirror.metadata.uid } } : {}) },
      });
      return true;
    } catch (e) {
      if (!isNotFound(e) && !isConflict(e)) log.error(`Failed deleting a mirror pod ${kv({ pod: podKey(mirror), error: (e as Error).message })}`);
      return false;
    }
  }

  async function reconcile(): Promise<void> {
    const statics = new Map(o.staticPods().map((p) => [podFullName(p), p]));
    const mirrors = new Map(o.mirrorPods().map((p) => [podFullName(p), p]));
    for (const [name, pod] of statics) {
      const mirror = mirrors.get(name);
      let deleted = false;
      if (mirror && (mirror.metadata.deletionTimestamp || !isMirrorPodOf(mirror, pod))) {
        log.info(`Trying to delete pod ${kv({ pod: podKey(pod), podUID: mirror.metadata.uid })}`);
        deleted = await deleteMirror(mirror, true);
        if (deleted) log.info(`Deleted mirror pod because it is outdated ${kv({ pod: podKey(mirror) })}`);
      }
      if (!mirror || deleted) await createMirror(pod);
    }
    for (const [name, mirror] of mirrors) {
      if (statics.has(name) || o.staticPodTerminating?.(name)) continue;
      if (await deleteMirror(mirror, false)) log.info(`Deleted orphaned mirror pod ${kv({ pod: podKey(mirror), podUID: mirror.metadata.uid })}`);
    }
  }

  /** One reconcile at a time; a request during one runs another right after. */
  function syncOnce(): Promise<void> {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      do {
        again = false;
        try {
          await reconcile();
        } catch (e) {
          log.error(`mirror pod sync failed ${kv({ error: (e as Error).message })}`);
        }
      } while (again);
    })().finally(() => (running = undefined));
    return running;
  }

  return {
    start() {
      stopPeriodic = every(o.clock, o.periodMs ?? 2000, syncOnce);
    },
    stop() {
      stopPeriodic?.();
    },
    syncOnce,
    mirrorOf(staticPod) {
      const m = o.mirrorPods().find((p) => isMirrorPodOf(p, staticPod));
      return m && !m.metadata.deletionTimestamp ? m : undefined;
    },
  };
}
