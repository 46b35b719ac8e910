// QoS and pod cgroups on cgroup v2 (the unified hierarchy) with the cgroupfs layout, as upstream's
// container manager does through libcontainer's fs2 manager: <cgroupRoot>/kubepods[/burstable|
// /besteffort]/pod<uid>, each new level's parent enabling every controller the root offers in
// cgroup.subtree_control (fs2 CreateCgroupPath), limits written as memory.max, cpu.weight, cpu.max and
// pids.max (unified-resources.ts). The pod cgroup is a leaf: the runtime enables controllers in it when
// it creates the container cgroups below.
import { existsSync, readFileSync } from "node:fs";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { kv, log } from "../log.ts";
import {
  burstableCpuShares,
  cgroupDirPath,
  MIN_SHARES,
  podCgroupName,
  podResourceConfig,
  podUidFromDir,
  qosCgroupName,
  systemdSliceName,
  type ResourceConfig,
} from "./cgroups-config.ts";
import { limitHeld, podRemovedListeners, removeCgroupDir, type KubepodsMemoryLimit, type PodCgroupManager, type PodCgroupManagerOptions } from "./cgroups.ts";
import { getPodQOS, type QOSClass } from "./qos.ts";
import type { PodLike } from "./pod-like.ts";
import type { Pod } from "./types.ts";
import type { SystemdUnits } from "./systemd-dbus.ts";
import { resourceProperties, transientSlice } from "./systemd-slices.ts";
import { parseControllers, REQUIRED_V2_CONTROLLERS, subtreeControlLine, unifiedResourceFiles } from "./unified-resources.ts";

/** True when `mountRoot` is a cgroup2 mount (the unified hierarchy), as libcontainer's IsCgroup2UnifiedMode. */
export function isUnifiedMount(mountRoot = "/sys/fs/cgroup"): boolean {
  return existsSync(join(mountRoot, "cgroup.controllers"));
}

/** The controllers the root of a v2 hierarchy offers (cgroup.controllers), [] when unreadable. */
export function rootControllers(mountRoot = "/sys/fs/cgroup"): string[] {
  try {
    return parseControllers(readFileSync(join(mountRoot, "cgroup.controllers"), "utf8"));
  } catch {
    return [];
  }
}

export function createUnifiedPodCgroupManager(opts: PodCgroupManagerOptions = {}): PodCgroupManager {
  const mountRoot = opts.mountRoot ?? "/sys/fs/cgroup";
  const cgroupRoot = opts.cgroupRoot || "/";
  const driver = opts.driver ?? "cgroupfs";
  const controllers = opts.controllers ?? rootControllers(mountRoot);
  const qosOf = new Map<string, { qos: QOSClass; pod: PodLike }>();
  const removed = podRemovedListeners();
  const rel = (name: string[]) => cgroupDirPath(driver, cgroupRoot, name);
  const dir = (_controller: string, name: string[]) => join(mountRoot, rel(name));
  // cgroupDriver systemd: every level is a transient slice systemd creates (and owns); no mkdir here.
  const systemd = driver === "systemd" ? opts.systemd : undefined;
  const startedSlices = new Set<string>();

  /** Enables the controllers in one level's subtree_control: all at once, else one by one (as fs2). */
  async function enableControllers(level: string) {
    const file = join(level, "cgroup.subtree_control");
    try {
      await writeFile(file, subtreeControlLine(controllers));
    } catch {
      for (const c of controllers) await writeFile(file, `+${c}`).catch(() => undefined);
    }
  }

  /** Starts the slice of each level not yet started (systemd driver); `cfg` gives the last level's resources. */
  async function startSlices(units: SystemdUnits, name: string[], cfg: ResourceConfig) {
    const systemdVersion = await units.version();
    for (let i = 1; i <= name.length; i++) {
      const level = name.slice(0, i);
      const last = i === name.length;
      const unit = systemdSliceName(level);
      if (startedSlices.has(unit) && !last) continue;
      await units.startTransientUnit(transientSlice(level, last ? cfg : {}, { systemdVersion }));
      startedSlices.add(unit);
    }
  }

  /** mkdir -p of a cgroup, every level above it (up to the mount) enabling the controllers; a slice with the systemd driver. */
  async function create(name: string[], cfg: ResourceConfig = {}) {
    if (systemd) return startSlices(systemd, name, cfg);
    const parts = rel(name).split("/").filter(Boolean);
    let level = mountRoot;
    for (let i = 0; i < parts.length; i++) {
      await enableControllers(level);
      level = join(level, parts[i]!);
      await mkdir(level).catch((e: NodeJS.ErrnoException) => {
        if (e.code !== "EEXIST") throw e;
      });
    }
  }

  async function apply(name: string[], cfg: ResourceConfig, what: string) {
    for (const f of unifiedResourceFiles(cfg)) {
      const path = join(dir(f.controller, name), f.file);
      try {
        await writeFile(path, f.value);
      } catch (e) {
        // A controller the parent could not delegate leaves no file: log and go on, the pod still runs.
        log.warn(`cgroup write failed ${kv({ cgroup: what, file: path, value: f.value, error: (e as Error).message })}`);
      }
    }
  }

  /**
   * A QoS level's resources as upstream's qos container manager updates them (UpdateCgroups → the cgroup
   * manager's Update → libcontainer Set): with the systemd driver first the slice's unit properties at
   * runtime (so systemd keeps them across a daemon-reload instead of writing its old value back), then
   * the files, as libcontainer's fs2 Set after setUnitProperties.
   */
  async function updateQoSLevel(qos: QOSClass, cfg: ResourceConfig, what: string) {
    const name = qosCgroupName(qos);
    if (systemd) {
      const unit = systemdSliceName(name);
      try {
        await systemd.setUnitProperties(unit, resourceProperties(cfg, { systemdVersion: await systemd.version() }));
      } catch (e) {
        log.warn(`systemd unit properties not set ${kv({ unit, error: (e as Error).message })}`);
      }
    }
    await apply(name, cfg, what);
  }

  async function updateQoS() {
    const pods = [...qosOf.values()].map((x) => x.pod);
    await updateQoSLevel("Burstable", { cpuShares: burstableCpuShares(pods) }, "burstable");
    await updateQoSLevel("BestEffort", { cpuShares: MIN_SHARES }, "besteffort");
  }

  async function warnMissingControllers() {
    let have: string[] = [];
    try {
      have = parseControllers(await readFile(join(dir("", ["kubepods"]), "cgroup.controllers"), "utf8"));
    } catch {
      // reported by the writes that follow
    }
    const missing = REQUIRED_V2_CONTROLLERS.filter((c) => !have.includes(c));
    if (missing.length > 0)
      log.warn(`kubepods lacks cgroup v2 controllers; their limits are not enforced ${kv({ missing: missing.join(","), available: have.join(",") })}`);
  }

  // v2 has no EBUSY: a memory.max below usage makes the kernel reclaim (or OOM-kill) instead. The
  // limit is still read back, so the eviction manager budgets against what the kernel holds.
  let kubepodsMemory: KubepodsMemoryLimit | undefined;
  async function readBackKubepodsMemory(): Promise<void> {
    const wanted = opts.kubepods?.memoryLimitBytes;
    if (wanted === undefined) return;
    const file = join(dir("memory", ["kubepods"]), "memory.max");
    const heldText = await readFile(file, "utf8").catch(() => "");
    const held = Number(heldText.trim());
    kubepodsMemory = { wantedBytes: wanted, heldBytes: Number.isFinite(held) ? held : undefined, applied: limitHeld(wanted, heldText) };
    if (!kubepodsMemory.applied) log.error(`kubepods memory limit not applied ${kv({ file, wanted, held: heldText.trim() || undefined })}`);
  }

  let setupDone: Promise<void> | undefined;
  const setup = () =>
    (setupDone ??= (async () => {
      if (systemd) await create(["kubepods"], opts.kubepods ?? {});
      await create(qosCgroupName("Burstable"), { cpuShares: burstableCpuShares([]) });
      await create(qosCgroupName("BestEffort"), { cpuShares: MIN_SHARES });
      await warnMissingControllers();
      if (opts.kubepods) await apply(["kubepods"], opts.kubepods, "kubepods");
      await readBackKubepodsMemory();
      await updateQoS();
      log.info(
        `QoS cgroups ready ${kv({ root: rel(["kubepods"]), driver, cgroupVersion: 2, controllers: controllers.join(","), memoryLimit: kubepodsMemory?.heldBytes ?? opts.kubepods?.memoryLimitBytes })}`,
      );
    })().catch((e) => {
      setupDone = undefined;
      throw e;
    }));

  return {
    setup,
    dir,
    controllers: () => controllers,
    kubepodsMemoryLimit: () => kubepodsMemory,
    close() {
      systemd?.close();
    },
    async ensurePod(pod: Pod) {
      await setup();
      const uid = pod.metadata.uid;
      const qos = getPodQOS(pod);
      const name = podCgroupName(qos, uid);
      const isNew = !qosOf.has(uid);
      qosOf.set(uid, { qos, pod });
      const cfg = podResourceConfig(pod, { podPidsLimit: opts.podPidsLimit, cpuCFSQuota: opts.cpuCFSQuota });
      if (!systemd || isNew) await create(name, cfg);
      if (isNew) {
        await apply(name, cfg, `pod${uid}`);
        await updateQoS();
      }
      // The CRI's cgroup_parent as upstream's GetPodCgroupParent: the cgroupfs form of the name — with the
      // systemd driver ToSystemd's expanded "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod<uid_>.slice"
      // (containerd/runc take its last element as the slice of the container's scope).
      return cgroupDirPath(driver, cgroupRoot, name);
    },
    async removePod(uid: string) {
      const known = qosOf.get(uid);
      qosOf.delete(uid);
      const candidates = known ? [known.qos] : (["Guaranteed", "Burstable", "BestEffort"] as QOSClass[]);
      for (const qos of candidates) {
        try {
          if (systemd) {
            const unit = systemdSliceName(podCgroupName(qos, uid));
            await systemd.stopUnit(unit);
            startedSlices.delete(unit);
          } else await removeCgroupDir(dir("", podCgroupName(qos, uid)));
        } catch (e) {
          log.warn(`pod cgroup removal failed ${kv({ uid, error: (e as Error).message })}`);
        }
      }
      removed.emit(uid);
      if (known) await updateQoS().catch(() => undefined);
    },
    onPodRemoved: removed.onPodRemoved,
    async listPodUids() {
      const uids: string[] = [];
      for (const name of [["kubepods"], qosCgroupName("Burstable"), qosCgroupName("BestEffort")]) {
        try {
          for (const e of await readdir(dir("", name), { withFileTypes: true }))
            if (e.isDirectory()) {
              const uid = podUidFromDir(e.name);
              if (uid) uids.push(uid);
            }
        } catch {
          // not created yet
        }
      }
      return uids;
    },
  };
}

export { podUidFromDir } from "./cgroups-config.ts";
