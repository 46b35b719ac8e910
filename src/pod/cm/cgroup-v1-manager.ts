// The cgroup v1 back end (upstream cm/cgroup_v1_manager_linux.go over libcontainer's fs manager): a cgroup
// is a directory in every v1 controller present (memory, cpu, cpuacct, pids, …), its limits the
// controllers' files (memory.limit_in_bytes, cpu.shares, cpu.cfs_quota_us, pids.max). I/O only.
import { existsSync, readdirSync, realpathSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { kv, log } from "../../log.ts";
import { cgroupDirPath, type ResourceConfig } from "../cgroups-config.ts";
import { directoryCgroupManager, readCgroupFile, writeCgroupFiles, type CgroupManager, type HierarchyOptions } from "./cgroup-manager.ts";

/** Controllers kubelet manages on v1 (upstream libcontainer subsystems that matter for pods). */
export const V1_CONTROLLERS = ["memory", "cpu", "cpuacct", "pids", "cpuset", "hugetlb", "blkio"] as const;

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

export function createCgroupV1Manager(opts: HierarchyOptions): CgroupManager {
  const { mountRoot, cgroupRoot, driver, controllers } = opts;
  const dir = (controller: string, name: string[]) => join(mountRoot, controller, cgroupDirPath(driver, cgroupRoot, name));
  const listed = controllers.includes("memory") ? "memory" : controllers[0];

  /** Returns the error of each failed write by file name. */
  function writeResources(name: string[], cfg: ResourceConfig, what: string): Promise<Map<string, string>> {
    const files = resourceFiles(cfg).filter((f) => controllers.includes(f.controller));
    return writeCgroupFiles(
      files.map((f) => ({ ...f, path: join(dir(f.controller, name), f.file) })),
      async ({ path, file, value }, e) => {
        // Lowering memory.limit_in_bytes below usage fails with EBUSY; a missing pids controller file
        // (old kernels) is not fatal. Report what the kernel holds and go on: the pod still runs. The
        // kubepods memory limit's refusal is reported by its caller (node-container-manager.ts).
        const error = e.code ?? e.message;
        const held = (await readCgroupFile(path))?.trim();
        if (file !== "memory.limit_in_bytes" || what !== "kubepods")
          log.warn(`cgroup write failed; the kernel keeps its value ${kv({ cgroup: what, file: path, value, held, error })}`);
        return error;
      },
    );
  }

  return {
    ...directoryCgroupManager({
      controllers,
      dir,
      dirs: (name) => controllers.map((controller) => ({ controller, dir: dir(controller, name) })),
      // Every controller has the same children: the memory one's are listed (any, without memory).
      listDir: (name) => (listed === undefined ? undefined : dir(listed, name)),
      writeResources,
    }),
    version: 1,
    memoryFiles: { limit: "memory.limit_in_bytes", usage: "memory.usage_in_bytes" },
    async create(name) {
      for (const c of controllers) {
        if (c === "cpuset") await createCpuset(join(mountRoot, c), cgroupDirPath(driver, cgroupRoot, name));
        else await mkdir(dir(c, name), { recursive: true });
      }
    },
    async validate() {},
  };
}

/** cpuset levels are created top-down so each inherits its parent's cpus/mems. */
async function createCpuset(root: string, path: string): Promise<void> {
  const parts = path.split("/").filter(Boolean);
  for (let i = 1; i <= parts.length; i++) {
    const d = join(root, ...parts.slice(0, i));
    if (existsSync(d)) continue;
    await mkdir(d);
    await inheritCpuset(d);
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
