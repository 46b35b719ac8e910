// Pod cgroups (upstream cm/pod_container_manager_linux.go): each pod's cgroup below its QoS class's
// (kubepods/pod<uid> for Guaranteed, kubepods/<qos>/pod<uid> otherwise) with ResourceConfigForPod's
// limits (cgroups-config.ts), made when the pod first starts, removed when it is gone — also an orphan's
// found at housekeeping (listPodUids) — and the QoS levels' shares updated after each change.
import { kv, log } from "../../log.ts";
import { cgroupDirPath, podCgroupName, podResourceConfig, podUidFromDir, qosCgroupName, type CgroupDriver, type ResourceConfig } from "../cgroups-config.ts";
import type { PodCgroups } from "../lifecycle-types.ts";
import type { PodCgroupResizer } from "../runtime.ts";
import type { PodLike } from "../pod-like.ts";
import { getPodQOS, type QOSClass } from "../qos.ts";
import type { Pod } from "../types.ts";
import type { CgroupManager } from "./cgroup-manager.ts";
import type { QOSContainerManager } from "./qos-container-manager.ts";

export interface PodContainerManager extends Required<PodCgroups> {
  /**
   * Calls `fn(uid)` after each removePod (a terminated pod's, or an orphan's at housekeeping), once its
   * cgroup is gone; returns an unsubscribe. The notifier-thread eviction plan re-plans on it
   * (wire/fast-eviction.ts): a pod cgroup removed changes the QoS directories' link counts it was built on.
   */
  onPodRemoved(fn: (uid: string) => void): () => void;
  /** The pods that have a pod cgroup. */
  activePods(): PodLike[];
}

/** The subscribers of onPodRemoved: one throwing does not keep the others, nor the removal, from going on. */
export function podRemovedListeners(): Pick<PodContainerManager, "onPodRemoved"> & { emit(uid: string): void } {
  const fns = new Set<(uid: string) => void>();
  return {
    onPodRemoved(fn) {
      fns.add(fn);
      return () => void fns.delete(fn);
    },
    emit(uid) {
      for (const fn of fns)
        try {
          fn(uid);
        } catch (e) {
          log.warn(`pod cgroup removal listener failed ${kv({ uid, error: (e as Error).message })}`);
        }
    },
  };
}

export interface PodContainerManagerDeps {
  cgroups: CgroupManager;
  qos: QOSContainerManager;
  cgroupRoot: string;
  driver: CgroupDriver;
  podPidsLimit?: number;
  cpuCFSQuota?: boolean;
}

const QOS_CLASSES: QOSClass[] = ["Guaranteed", "Burstable", "BestEffort"];

export function createPodContainerManager(deps: PodContainerManagerDeps): PodContainerManager {
  const { cgroups, qos } = deps;
  const placed = new Map<string, { qos: QOSClass; pod: PodLike; cfg: ResourceConfig }>();
  const removed = podRemovedListeners();

  return {
    activePods: () => [...placed.values()].map((x) => x.pod),
    async ensurePod(pod: Pod) {
      await qos.setup();
      const uid = pod.metadata.uid;
      const qosClass = getPodQOS(pod);
      const name = podCgroupName(qosClass, uid);
      const before = placed.get(uid);
      const isNew = !before;
      const cfg = podResourceConfig(pod, { podPidsLimit: deps.podPidsLimit, cpuCFSQuota: deps.cpuCFSQuota });
      placed.set(uid, { qos: qosClass, pod, cfg: before?.cfg ?? cfg });
      await cgroups.create(name, isNew ? cfg : undefined);
      if (isNew) {
        await cgroups.writeResources(name, cfg, `pod${uid}`);
        await qos.updateCgroups();
      }
      // The CRI's cgroup_parent as upstream's GetPodCgroupParent: the cgroupfs form of the name — with the
      // systemd driver ToSystemd's expanded "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod<uid_>.slice"
      // (containerd/runc take its last element as the slice of the container's scope).
      return cgroupDirPath(deps.driver, deps.cgroupRoot, name);
    },
    async removePod(uid: string) {
      const known = placed.get(uid);
      placed.delete(uid);
      // An orphan's QoS class is not known: its cgroup may be under any.
      for (const qosClass of known ? [known.qos] : QOS_CLASSES)
        for (const f of await cgroups.destroy(podCgroupName(qosClass, uid))) {
          if (f.unit) log.warn(`pod slice stop failed ${kv({ uid, unit: f.unit, error: f.error })}`);
          else log.warn(`pod cgroup removal failed ${kv({ uid, controller: f.controller, error: f.error })}`);
        }
      removed.emit(uid);
      if (known) await qos.updateCgroups().catch(() => undefined);
    },
    onPodRemoved: removed.onPodRemoved,
    resize: podCgroupResizer(deps, placed),
    async listPodUids() {
      const uids: string[] = [];
      for (const name of [["kubepods"], qosCgroupName("Burstable"), qosCgroupName("BestEffort")])
        for (const d of await cgroups.children(name)) {
          const uid = podUidFromDir(d);
          if (uid) uids.push(uid);
        }
      return uids;
    },
  };
}

/** In-place resize of a placed pod's cgroup (upstream podContainerManagerImpl GetPodCgroupConfig / SetPodCgroupConfig). */
function podCgroupResizer(deps: PodContainerManagerDeps, placed: Map<string, { qos: QOSClass; pod: PodLike; cfg: ResourceConfig }>): PodCgroupResizer {
  const { cgroups } = deps;
  return {
    config: (pod) => placed.get(pod.metadata.uid ?? "")?.cfg,
    async set(pod, cfg) {
      const uid = pod.metadata.uid ?? "";
      const known = placed.get(uid);
      const failed = await cgroups.update(podCgroupName(known?.qos ?? getPodQOS(pod), uid), cfg, `pod${uid}`);
      if (failed.size > 0) throw new Error(`failed to set pod${uid} cgroup config: ${[...failed].map(([f, e]) => `${f}: ${e}`).join(", ")}`);
      if (known) placed.set(uid, { ...known, pod, cfg: { ...known.cfg, ...cfg } });
      // The Burstable level's cpu.shares follow its pods' requests.
      if (cfg.cpuShares !== undefined) await deps.qos.updateCgroups().catch(() => undefined);
    },
    async memoryUsageBytes(pod) {
      const uid = pod.metadata.uid ?? "";
      const text = await cgroups.read("memory", podCgroupName(placed.get(uid)?.qos ?? getPodQOS(pod), uid), cgroups.memoryFiles.usage);
      const n = text === undefined ? Number.NaN : Number(text.trim());
      return Number.isFinite(n) ? n : undefined;
    },
  };
}
