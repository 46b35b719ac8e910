// What /metrics/cadvisor serves, read from the same sources as /stats/summary — the pods' and
// containers' cgroups, the CRI listing, statfs and /proc — instead of an embedded cAdvisor:
//   root cgroup "/"  → node memory and CPU;
//   pod cgroup       → memory, CPU and the pod's network (read in its network namespace, as cAdvisor
//                      reports the sandbox's interfaces);
//   container cgroup → memory (usage, working set, rss, cache, swap, limit), CPU, start time, and the
//                      writable layer's usage on its filesystem (CRI ContainerStats);
//   every cgroup     → block I/O per device (v2 io.stat, v1 blkio.throttle.*; stats/io.ts).
// Labels are cAdvisor's as the kubelet sets them (containerPrometheusLabelsFunc): id = cgroup path,
// name = runtime id, image, and pod/namespace/container from the kubelet's labels.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { CriClient } from "../cri/client.ts";
import { parseFlatKeyed } from "../kernel/cgroup-parse.ts";
import { CONTAINER_NAME_LABEL, POD_UID_LABEL } from "../pod/kuberuntime/labels.ts";
import type { Pod } from "../pod/types.ts";
import { mountHolding } from "../pod/volumes/mount-points.ts";
import { containerCgroupDirs } from "./cgroup-stats.ts";
import { fsStats } from "./fs.ts";
import { createDeviceNamer, readCgroupIo, type DeviceIo } from "./io.ts";
import { parseNetDevInterfaces } from "./network.ts";
import { cgroupDirs, DEFAULT_CGROUP_MOUNT, firstPid, readCpuUsageNs, type CgroupDirs } from "./pods.ts";

export interface CadvisorMemory {
  usageBytes: number;
  workingSetBytes: number;
  rssBytes?: number;
  cacheBytes?: number;
  /** 0 when unlimited, as cAdvisor's container_spec_memory_limit_bytes. */
  limitBytes: number;
  /** Swap used (cAdvisor Memory.Swap: v2 memory.swap.current, v1 total_swap), 0 without swap accounting. */
  swapBytes: number;
}

export interface CadvisorContainer {
  /** The cgroup path ("/", "/kubepods/burstable/pod<uid>/<id>"). */
  id: string;
  /** The runtime's container id (cAdvisor's first alias); "" for cgroups that are not containers. */
  name: string;
  image: string;
  container: string;
  pod: string;
  namespace: string;
  cpuUsageSeconds?: number;
  memory?: CadvisorMemory;
  startTimeSeconds?: number;
  fs?: { device: string; usageBytes: number; limitBytes: number }[];
  network?: NetDevice[];
  /** Block I/O per device ("/dev/sda"). */
  io?: DeviceIo[];
}

export interface NetDevice {
  interface: string;
  receiveBytes: number;
  transmitBytes: number;
}

export interface CadvisorMachine {
  memoryBytes: number;
  cpuCores: number;
  bootID: string;
  machineID: string;
  systemUUID: string;
}

export interface CadvisorSnapshot {
  containers: CadvisorContainer[];
  machine?: CadvisorMachine;
  /** Something could not be read (container_scrape_error 1). */
  error: boolean;
}

/** v1 reports "no limit" as a page-rounded 2^63−1. */
const UNLIMITED_BYTES = 2 ** 62;

/** Pure: memory files of one cgroup → cAdvisor's memory figures (v1: total_*; v2: anon/file, memory.swap.current). */
export function cadvisorMemory(version: 1 | 2, usage: string, stat: string, limit: string | undefined, swapCurrent?: string): CadvisorMemory {
  const u = Number(usage.trim());
  const s = parseFlatKeyed(stat, "memory.stat");
  const inactiveFile = (version === 1 ? s.total_inactive_file : s.inactive_file) ?? 0;
  const l = limit?.trim();
  const n = l === undefined || l === "max" ? 0 : Number(l);
  return {
    usageBytes: u,
    workingSetBytes: Math.max(0, u - inactiveFile),
    rssBytes: version === 1 ? s.total_rss : s.anon,
    cacheBytes: version === 1 ? s.total_cache : s.file,
    limitBytes: Number.isFinite(n) && n < UNLIMITED_BYTES ? n : 0,
    swapBytes: (version === 1 ? s.total_swap : Number(swapCurrent?.trim() ?? 0)) || 0,
  };
}

/** Pure: /proc/<pid>/net/dev → per-interface byte counters, ignored devices dropped (stats/network.ts). */
export function parseNetDev(text: string): NetDevice[] {
  return parseNetDevInterfaces(text).map((i) => ({ interface: i.name, receiveBytes: i.rxBytes, transmitBytes: i.txBytes }));
}

/** Pure: the source device of the mount `path` resides on, from mountinfo. */
export const deviceOf = (mountinfo: string, path: string): string | undefined => mountHolding(path, mountinfo)?.source || undefined;

export interface CadvisorSourceDeps {
  activePods(): readonly Pod[];
  /** The pod's cgroup relative to each controller's mount ("kubepods/burstable/pod<uid>"). */
  podCgroupPath(pod: Pod): string | undefined;
  cri?: Pick<CriClient, "listContainers" | "listContainerStats">;
  machine?(): Promise<CadvisorMachine>;
  cgroupMountRoot?: string;
  /** Where /proc is (tests). */
  procRoot?: string;
  /** Where /sys/dev/block is (tests). */
  sysDevBlock?: string;
}

const isEnoent = (e: unknown) => (e as NodeJS.ErrnoException)?.code === "ENOENT";

export function createCadvisorSource(d: CadvisorSourceDeps): () => Promise<CadvisorSnapshot> {
  const mountRoot = d.cgroupMountRoot ?? DEFAULT_CGROUP_MOUNT;
  const proc = d.procRoot ?? "/proc";
  let version: 1 | 2 | undefined;
  let machine: CadvisorMachine | undefined;
  const deviceName = createDeviceNamer(d.sysDevBlock);
  const dirsOf = (rel: string): CgroupDirs => {
    const dirs = cgroupDirs(mountRoot, rel, version);
    version = dirs.version;
    return dirs;
  };
  return async () => {
    // Per scrape: concurrent scrapes do not share their error state.
    const s = scrapeState(proc, deviceName);
    if (d.machine && !machine) machine = await d.machine().catch(() => s.failed(undefined));
    const [containers, layers] = await Promise.all([
      d.cri ? d.cri.listContainers({ state: { state: "CONTAINER_RUNNING" } }).catch(() => s.failed([])) : [],
      d.cri ? d.cri.listContainerStats().then(writableLayers, () => s.failed(new Map<string, WritableLayer>())) : new Map<string, WritableLayer>(),
    ]);
    const mountinfo = s.attempt(() => readFileSync(join(proc, "self", "mountinfo"), "utf8")) ?? "";
    const fsLimit = new Map<string, number>();
    const out: CadvisorContainer[] = [{ id: "/", name: "", image: "", container: "", pod: "", namespace: "", ...s.cgroupFigures(dirsOf("")) }];
    const byUid = Map.groupBy(containers, (c) => c.labels?.[POD_UID_LABEL] ?? "");
    for (const pod of d.activePods()) {
      const rel = s.attempt(() => d.podCgroupPath(pod));
      if (rel === undefined) continue;
      const dirs = dirsOf(rel);
      if (!existsSync(dirs.memory)) continue;
      const base = { pod: pod.metadata.name, namespace: pod.metadata.namespace ?? "default" };
      const id = `/${rel.replace(/^\/+/, "")}`;
      out.push({ id, name: "", image: "", container: "", ...base, ...s.cgroupFigures(dirs), network: pod.spec.hostNetwork ? undefined : s.podNetwork(dirs) });
      for (const c of byUid.get(pod.metadata.uid ?? "") ?? []) {
        const cdirs = containerCgroupDirs(dirs, c.id);
        if (!cdirs) continue;
        const name = c.metadata?.name ?? c.labels?.[CONTAINER_NAME_LABEL] ?? "";
        const specImage = [...(pod.spec.initContainers ?? []), ...pod.spec.containers].find((x) => x.name === name)?.image;
        const cs: CadvisorContainer = {
          id: `${id}/${cdirs.memory.split("/").pop()}`,
          name: c.id,
          image: specImage ?? c.image?.image ?? "",
          container: name,
          ...base,
          ...s.cgroupFigures(cdirs),
        };
        if (c.createdAt) cs.startTimeSeconds = Math.floor(c.createdAt / 1e6) / 1000;
        const layer = layers.get(c.id);
        if (layer) {
          if (!fsLimit.has(layer.mountpoint)) fsLimit.set(layer.mountpoint, s.attempt(() => fsStats(layer.mountpoint, "").capacityBytes) ?? 0);
          cs.fs = [
            { device: deviceOf(mountinfo, layer.mountpoint) ?? layer.mountpoint, usageBytes: layer.usedBytes, limitBytes: fsLimit.get(layer.mountpoint)! },
          ];
        }
        out.push(cs);
      }
    }
    return { containers: out, machine, error: s.error() };
  };
}

interface WritableLayer {
  mountpoint: string;
  usedBytes: number;
}

function writableLayers(stats: Awaited<ReturnType<CriClient["listContainerStats"]>>): Map<string, WritableLayer> {
  const byId = new Map<string, WritableLayer>();
  for (const s of stats) {
    const wl = s.writableLayer;
    if (s.attributes?.id && wl?.usedBytes && wl.fsId?.mountpoint) byId.set(s.attributes.id, { mountpoint: wl.fsId.mountpoint, usedBytes: wl.usedBytes.value });
  }
  return byId;
}

/** One scrape's readers; a read that fails for any reason but "gone" (ENOENT) marks the scrape partial. */
function scrapeState(proc: string, deviceName: (device: string) => string) {
  let error = false;
  const failed = <T>(fallback: T): T => ((error = true), fallback);
  const attempt = <T>(fn: () => T): T | undefined => {
    try {
      return fn();
    } catch (e) {
      if (!isEnoent(e)) error = true;
      return undefined;
    }
  };
  const read = (dir: string, file: string) => readFileSync(join(dir, file), "utf8");
  const memoryOf = (dirs: CgroupDirs) =>
    attempt(() => {
      const v1 = dirs.version === 1;
      const usage = read(dirs.memory, v1 ? "memory.usage_in_bytes" : "memory.current");
      const stat = read(dirs.memory, "memory.stat");
      // The root cgroup has no limit file: no limit, not an error; no swap accounting: no swap file.
      const optional = (file: string) => {
        try {
          return read(dirs.memory, file);
        } catch (e) {
          if (!isEnoent(e)) throw e;
          return undefined;
        }
      };
      const limit = optional(v1 ? "memory.limit_in_bytes" : "memory.max");
      return cadvisorMemory(dirs.version, usage, stat, limit, v1 ? undefined : optional("memory.swap.current"));
    });
  return {
    attempt,
    failed,
    error: () => error,
    cgroupFigures: (dirs: CgroupDirs) => ({
      memory: memoryOf(dirs),
      cpuUsageSeconds: attempt(() => readCpuUsageNs(dirs) / 1e9),
      io: attempt(() => readCgroupIo(dirs.version, dirs.io).map((x) => ({ ...x, device: deviceName(x.device) }))),
    }),
    /** The pod's interfaces, read through one of its processes' network namespace. */
    podNetwork: (dirs: CgroupDirs): NetDevice[] | undefined =>
      attempt(() => {
        const pid = firstPid(dirs.memory);
        return pid === undefined ? undefined : parseNetDev(readFileSync(join(proc, String(pid), "net", "dev"), "utf8"));
      }),
  };
}
