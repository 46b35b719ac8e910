// The cgroup v2 back end (upstream cm/cgroup_v2_manager_linux.go over libcontainer's fs2 manager): one
// directory per cgroup in the unified hierarchy, each new level's parent enabling every controller the
// root offers in cgroup.subtree_control (fs2 CreateCgroupPath), limits written as memory.max, cpu.weight,
// cpu.max and pids.max (unified-resources.ts). The pod cgroup is a leaf: the runtime enables controllers
// in it when it creates the container cgroups below. I/O only.
import { existsSync, readFileSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { kv, log } from "../../log.ts";
import { cgroupDirPath, type ResourceConfig } from "../cgroups-config.ts";
import { parseControllers, REQUIRED_V2_CONTROLLERS, subtreeControlLine, unifiedResourceFiles } from "../unified-resources.ts";
import { directoryCgroupManager, readCgroupFile, writeCgroupFiles, type CgroupManager, type HierarchyOptions } from "./cgroup-manager.ts";

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

export function createCgroupV2Manager(opts: HierarchyOptions): CgroupManager {
  const { mountRoot, cgroupRoot, driver, controllers } = opts;
  const dir = (_controller: string, name: string[]) => join(mountRoot, cgroupDirPath(driver, cgroupRoot, name));

  /** Enables the controllers in one level's subtree_control: all at once, else one by one (as fs2). */
  async function enableControllers(level: string) {
    const file = join(level, "cgroup.subtree_control");
    try {
      await writeFile(file, subtreeControlLine(controllers));
    } catch {
      for (const c of controllers) await writeFile(file, `+${c}`).catch(() => undefined);
    }
  }

  function writeResources(name: string[], cfg: ResourceConfig, what: string): Promise<Map<string, string>> {
    const files = unifiedResourceFiles(cfg).map((f) => ({ ...f, path: join(dir(f.controller, name), f.file) }));
    return writeCgroupFiles(files, ({ path, value }, e) => {
      // A controller the parent could not delegate leaves no file: log and go on, the pod still runs.
      log.warn(`cgroup write failed ${kv({ cgroup: what, file: path, value, error: e.message })}`);
      return e.message;
    });
  }

  return {
    ...directoryCgroupManager({ controllers, dir, dirs: (name) => [{ dir: dir("", name) }], listDir: (name) => dir("", name), writeResources }),
    version: 2,
    memoryFiles: { limit: "memory.max", usage: "memory.current" },
    /** mkdir of each missing level, every level above it (up to the mount) enabling the controllers. */
    async create(name) {
      const parts = cgroupDirPath(driver, cgroupRoot, name).split("/").filter(Boolean);
      let level = mountRoot;
      for (let i = 0; i < parts.length; i++) {
        await enableControllers(level);
        level = join(level, parts[i]!);
        await mkdir(level).catch((e: NodeJS.ErrnoException) => {
          if (e.code !== "EEXIST") throw e;
        });
      }
    },
    async validate(name) {
      const have = parseControllers((await readCgroupFile(join(dir("", name), "cgroup.controllers"))) ?? "");
      const missing = REQUIRED_V2_CONTROLLERS.filter((c) => !have.includes(c));
      if (missing.length > 0)
        log.warn(`kubepods lacks cgroup v2 controllers; their limits are not enforced ${kv({ missing: missing.join(","), available: have.join(",") })}`);
    },
  };
}
