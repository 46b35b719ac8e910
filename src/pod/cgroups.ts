// QoS and pod cgroups on cgroup v1 with the cgroupfs layout (upstream cm/qos_container_manager_linux.go,
// cm/pod_container_manager_linux.go): <cgroupRoot>/kubepods[/burstable|/besteffort]/pod<uid> in every
// v1 controller present (memory, cpu, cpuacct, pids, …). The runtime then places containers under the
// cgroup_parent we return. Limits come from cgroups-config.ts; this file only touches the filesystem.
import { existsSync, readdirSync, realpathSync } from "node:fs";
import { mkdir, readFile, readdir, rmdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { kv, log } from "../log.ts";
import {
  burstableCpuShares,
  cgroupDirPath,
  MIN_SHARES,
  podUidFromDir,
  podCgroupName,
  podResourceConfig,
  qosCgroupName,
  systemdSliceName,
  type CgroupDriver,
  type ResourceConfig,
} from "./cgroups-config.ts";
import type { PodCgroups } from "./lifecycle-types.ts";
import type { PodLike } from "./pod-like.ts";
import { getPodQOS, type QOSClass } from "./qos.ts";
import type { SystemdUnits } from "./systemd-dbus.ts";
import { resourceProperties, transientSlice } from "./systemd-slices.ts";
import type { Pod } from "./types.ts";

/** Controllers kubelet manages on v1 (upstream libcontainer subsystems that matter for pods). */
export const V1_CONTROLLERS = ["memory", "cpu", "cpuacct", "pids", "cpuset", "hugetlb", "blkio"] as const;

export interface PodCgroupManagerOptions {
  /** Where the v1 controllers are mounted; default /sys/fs/cgroup. */
  mountRoot?: string;
  /** KubeletConfiguration cgroupRoot; default "/". */
  cgroupRoot?: string;
  driver?: CgroupDriver;
  /** Subset of controllers to use (default: every V1_CONTROLLERS entry mounted under mountRoot). */
  controllers?: string[];
  podPidsLimit?: number;
  cpuCFSQuota?: boolean;
  /** kubepods limits (from kubepodsResourceConfig) written at setup. */
  kubepods?: ResourceConfig;
  /** How often a kubepods memory limit the kernel refused (EBUSY: usage above it) is retried; default 10 s. */
  limitRetryMs?: number;
  /** cgroupDriver systemd: slices are created and stopped as transient units through this (systemd-dbus.ts). */
  systemd?: SystemdUnits;
}

/** The kubepods memory limit bunlet wants and the one the kernel holds (read back after each write). */
export interface KubepodsMemoryLimit {
  wantedBytes: number;
  heldBytes?: number;
  /** The kernel holds the wanted limit (to the page: v1 rounds down to a page multiple). */
  applied: boolean;
}

export interface PodCgroupManager extends PodCgroups {
  /** Creates kubepods, kubepods/burstable, kubepods/besteffort and writes the kubepods limits. */
  setup(): Promise<void>;
  /** Absolute directory of a cgroup (relative name) in one controller. */
  dir(controller: string, name: string[]): string;
  controllers(): string[];
  listPodUids(): Promise<string[]>;
  /** undefined before setup or without a kubepods memory limit. */
  kubepodsMemoryLimit(): KubepodsMemoryLimit | undefined;
  /** Stops the retry of a refused limit. */
  close(): void;
  /**
   * Calls `fn(uid)` after each removePod (a terminated pod's, or an orphan's at housekeeping), once its
   * cgroup is gone; returns an unsubscribe. The notifier-thread eviction plan re-plans on it
   * (wire/fast-eviction.ts): a pod cgroup removed changes the QoS directories' link counts it was built on.
   */
  onPodRemoved(fn: (uid: string) => void): () => void;
}

/** The subscribers of onPodRemoved: one throwing does not keep the others, nor the removal, from going on. */
export function podRemovedListeners(): Pick<PodCgroupManager, "onPodRemoved"> & { emit(uid: string): void } {
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

const PAGE = 4096;
/** v1 stores limits rounded down to a page; "max" / 9223372036854771712 is unlimited. */
export function limitHeld(wantedBytes: number, heldText: string): boolean {
  const held = Number(heldText.trim());
  return Number.isFinite(held) && held <= wantedBytes && wantedBytes - held < PAGE;
}

/** Mounted v1 controllers, one entry per distinct mount ("cpu" and "cpuacct" may share one). */
export function detectV1Controllers(mountRoot = "/sys/fs/cgroup"): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const c of V1_CONTROLLERS) {
    const p = join(mountRoot, c);
    if (!existsSync(p)) continue;
    let real: string;
    try {
      real = realpathSync(p);
      if (!readdirSync(p).some((f) => f === "cgroup.procs")) continue;
    } catch {
      continue;
    }
    if (seen.has(real)) continue;
    seen.add(real);
    out.push(c);
  }
  return out;
}

/** The files a ResourceConfig writes, per controller. */
export function resourceFiles(cfg: ResourceConfig): { controller: string; file: string; value: string }[] {
  const out: { controller: string; file: string; value: string }[] = [];
  if (cfg.memoryLimitBytes !== undefined) out.push({ controller: "memory", file: "memory.limit_in_bytes", value: String(cfg.memoryLimitBytes) });
  if (cfg.cpuShares !== undefined) out.push({ controller: "cpu", file: "cpu.shares", value: String(cfg.cpuShares) });
  if (cfg.cpuPeriodUs !== undefined) out.push({ controller: "cpu", file: "cpu.cfs_period_us", value: String(cfg.cpuPeriodUs) });
  if (cfg.cpuQuotaUs !== undefined) out.push({ controller: "cpu", file: "cpu.cfs_quota_us", value: String(cfg.cpuQuotaUs) });
  if (cfg.pidsLimit !== undefined) out.push({ controller: "pids", file: "pids.max", value: cfg.pidsLimit > 0 ? String(cfg.pidsLimit) : "max" });
  return out;
}

export function createPodCgroupManager(opts: PodCgroupManagerOptions = {}): PodCgroupManager {
  const mountRoot = opts.mountRoot ?? "/sys/fs/cgroup";
  const cgroupRoot = opts.cgroupRoot || "/";
  const controllers = opts.controllers ?? detectV1Controllers(mountRoot);
  const qosOf = new Map<string, { qos: QOSClass; pod: PodLike }>();
  const removed = podRemovedListeners();

  const driver = opts.driver ?? "cgroupfs";
  const dir = (controller: string, name: string[]) => join(mountRoot, controller, cgroupDirPath(driver, cgroupRoot, name));
  // cgroupDriver systemd with systemd running: each level is first a transient slice (libcontainer's v1
  // systemd manager), then the directories systemd did not make (controllers it does not account, such
  // as cpuset) are made and the files written, as libcontainer's v1 Set does through cgroupfs.
  const systemd = driver === "systemd" ? opts.systemd : undefined;
  const startedSlices = new Set<string>();

  /** Starts each level not started yet; the last one again with `cfg` when given (its resources). */
  async function startSlices(units: SystemdUnits, name: string[], cfg: ResourceConfig | undefined) {
    const systemdVersion = await units.version();
    for (let i = 1; i <= name.length; i++) {
      const level = name.slice(0, i);
      const last = i === name.length;
      const unit = systemdSliceName(level);
      if (startedSlices.has(unit) && (!last || !cfg)) continue;
      await units.startTransientUnit(transientSlice(level, last ? (cfg ?? {}) : {}, { systemdVersion, cgroupVersion: 1 }));
      startedSlices.add(unit);
    }
  }

  async function create(name: string[], cfg?: ResourceConfig) {
    if (systemd) await startSlices(systemd, name, cfg);
    for (const c of controllers) {
      if (c !== "cpuset") {
        await mkdir(dir(c, name), { recursive: true });
        continue;
      }
      // cpuset levels are created top-down so each inherits its parent's cpus/mems.
      const root = join(mountRoot, c);
      const parts = cgroupDirPath(driver, cgroupRoot, name).split("/").filter(Boolean);
      for (let i = 1; i <= parts.length; i++) {
        const d = join(root, ...parts.slice(0, i));
        if (existsSync(d)) continue;
        await mkdir(d);
        await inheritCpuset(d);
      }
    }
  }

  /** Returns the error of each failed write by file name. */
  async function apply(name: string[], cfg: ResourceConfig, what: string): Promise<Map<string, string>> {
    const failed = new Map<string, string>();
    for (const f of resourceFiles(cfg)) {
      if (!controllers.includes(f.controller)) continue;
      const path = join(dir(f.controller, name), f.file);
      try {
        await writeFile(path, f.value);
      } catch (e) {
        // Lowering memory.limit_in_bytes below usage fails with EBUSY; a missing pids controller file
        // (old kernels) is not fatal. Report what the kernel holds and go on: the pod still runs.
        const error = (e as NodeJS.ErrnoException).code ?? (e as Error).message;
        failed.set(f.file, error);
        const held = await readFile(path, "utf8").then(
          (t) => t.trim(),
          () => undefined,
        );
        if (f.file !== "memory.limit_in_bytes" || what !== "kubepods")
          log.warn(`cgroup write failed; the kernel keeps its value ${kv({ cgroup: what, file: path, value: f.value, held, error })}`);
      }
    }
    return failed;
  }

  // kubepods memory: what we want, what the kernel holds, and a retry while they differ.
  let kubepodsMemory: KubepodsMemoryLimit | undefined;
  let retryTimer: ReturnType<typeof setTimeout> | undefined;
  let closed = false;
  const memoryFile = () => join(dir("memory", ["kubepods"]), "memory.limit_in_bytes");
  async function applyKubepodsMemory(first: boolean): Promise<void> {
    const wanted = opts.kubepods?.memoryLimitBytes;
    if (wanted === undefined || !controllers.includes("memory")) return;
    const failed = await apply(["kubepods"], { memoryLimitBytes: wanted }, "kubepods");
    const heldText = await readFile(memoryFile(), "utf8").catch(() => "");
    const heldBytes = heldText ? Number(heldText.trim()) : undefined;
    const applied = limitHeld(wanted, heldText);
    const was = kubepodsMemory;
    kubepodsMemory = { wantedBytes: wanted, heldBytes, applied };
    if (!applied && (first || was?.applied)) {
      const usage = await readFile(join(dir("memory", ["kubepods"]), "memory.usage_in_bytes"), "utf8").then(
        (t) => Number(t.trim()),
        () => undefined,
      );
      log.error(
        `kubepods memory limit not applied: the kernel keeps its old limit; eviction works toward the wanted one and the write is retried every ${(opts.limitRetryMs ?? 10_000) / 1000}s ${kv({ file: memoryFile(), wanted, held: heldBytes, usage, error: failed.get("memory.limit_in_bytes") ?? "read back a different value" })}`,
      );
    } else if (applied && was && !was.applied) log.info(`kubepods memory limit applied after reclaim ${kv({ file: memoryFile(), limit: heldBytes })}`);
    if (!applied && !closed) {
      retryTimer = setTimeout(
        () => void applyKubepodsMemory(false).catch((e) => log.warn(`kubepods memory limit retry failed ${kv({ error: (e as Error).message })}`)),
        opts.limitRetryMs ?? 10_000,
      );
      retryTimer.unref?.();
    }
  }

  /**
   * A QoS level's resources as upstream's qos container manager updates them (UpdateCgroups → the cgroup
   * manager's Update → libcontainer Set): with the systemd driver first the slice's unit properties at
   * runtime (so systemd keeps them across a daemon-reload instead of writing its old value back), then
   * the v1 files, as libcontainer's v1 Set after setUnitProperties.
   */
  async function updateQoSLevel(qos: QOSClass, cfg: ResourceConfig, what: string) {
    const name = qosCgroupName(qos);
    if (systemd) {
      const unit = systemdSliceName(name);
      try {
        await systemd.setUnitProperties(unit, resourceProperties(cfg, { systemdVersion: await systemd.version(), cgroupVersion: 1 }));
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

  let setupDone: Promise<void> | undefined;
  const setup = () =>
    (setupDone ??= (async () => {
      await create(["kubepods"], opts.kubepods ?? {});
      await create(qosCgroupName("Burstable"), { cpuShares: burstableCpuShares([]) });
      await create(qosCgroupName("BestEffort"), { cpuShares: MIN_SHARES });
      if (opts.kubepods) await apply(["kubepods"], { ...opts.kubepods, memoryLimitBytes: undefined }, "kubepods");
      await applyKubepodsMemory(true);
      await updateQoS();
      // The limit the kernel holds, read back — not the one asked for.
      log.info(
        `QoS cgroups ready ${kv({ root: cgroupDirPath(driver, cgroupRoot, ["kubepods"]), driver, controllers: controllers.join(","), memoryLimit: kubepodsMemory?.heldBytes, wantedMemoryLimit: kubepodsMemory && !kubepodsMemory.applied ? kubepodsMemory.wantedBytes : undefined })}`,
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
      closed = true;
      if (retryTimer) clearTimeout(retryTimer);
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
      await create(name, isNew ? cfg : undefined);
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
        if (systemd) {
          const unit = systemdSliceName(podCgroupName(qos, uid));
          await systemd.stopUnit(unit).catch((e: Error) => log.warn(`pod slice stop failed ${kv({ uid, unit, error: e.message })}`));
          startedSlices.delete(unit);
        }
        // What systemd did not remove (controllers it does not account) goes as with cgroupfs.
        for (const c of controllers) {
          try {
            await removeCgroupDir(dir(c, podCgroupName(qos, uid)));
          } catch (e) {
            log.warn(`pod cgroup removal failed ${kv({ uid, controller: c, error: (e as Error).message })}`);
          }
        }
      }
      removed.emit(uid);
      if (known) await updateQoS().catch(() => undefined);
    },
    onPodRemoved: removed.onPodRemoved,
    async listPodUids() {
      const c = controllers.includes("memory") ? "memory" : controllers[0];
      if (!c) return [];
      const uids: string[] = [];
      for (const name of [["kubepods"], qosCgroupName("Burstable"), qosCgroupName("BestEffort")]) {
        try {
          for (const e of await readdir(dir(c, name), { withFileTypes: true }))
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

/** Kills what is left in a cgroup and below (upstream killOnePid loop), then removes it deepest first. */
export async function removeCgroupDir(d: string): Promise<void> {
  try {
    const pids = (await readFile(join(d, "cgroup.procs"), "utf8")).split("\n").filter(Boolean);
    for (const pid of pids) {
      try {
        process.kill(Number(pid), "SIGKILL");
      } catch {
        // already gone
      }
    }
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return;
  }
  for (let i = 0; ; i++) {
    try {
      // Child cgroups (containers the runtime left behind) go first.
      for (const ent of await readdir(d, { withFileTypes: true })) if (ent.isDirectory()) await removeCgroupDir(join(d, ent.name));
      await rmdir(d);
      return;
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === "ENOENT") return;
      if (code !== "EBUSY" || i >= 20) throw e;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

/** A new v1 cpuset cgroup starts with empty cpus/mems and refuses tasks; copy the parent's. */
async function inheritCpuset(d: string): Promise<void> {
  for (const f of ["cpuset.cpus", "cpuset.mems"]) {
    try {
      const own = (await readFile(join(d, f), "utf8")).trim();
      if (own) continue;
      const parent = (await readFile(join(d, "..", f), "utf8")).trim();
      if (parent) await writeFile(join(d, f), parent);
    } catch {
      // not a cpuset hierarchy
    }
  }
}
