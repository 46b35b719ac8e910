// What the QoS and pod cgroup managers need of one cgroup hierarchy (upstream cm/types.go CgroupManager,
// implemented in cm/cgroup_manager_linux.go over libcontainer's cgroup managers): I/O only. Three back
// ends: cgroup-v1-manager.ts (libcontainer fs: a directory per v1 controller), cgroup-v2-manager.ts (fs2:
// the unified hierarchy's files) and cgroup-systemd-manager.ts (systemd: transient slice units over either).
// Which cgroups exist, their names, limits and when they change is decided above, once.
import { readdir, readFile, rmdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { CgroupDriver, ResourceConfig } from "../cgroups-config.ts";

/** A step of a pod cgroup's removal that failed: the controller's directory (v1), the systemd unit, or the cgroup. */
export interface RemovalFailure {
  controller?: string;
  unit?: string;
  error: string;
}

export interface HierarchyOptions {
  /** Where the hierarchy is mounted (v1: the controllers' mounts below it). */
  mountRoot: string;
  /** KubeletConfiguration cgroupRoot. */
  cgroupRoot: string;
  /** The layout of the names: cgroupfs directories or systemd's slice directories. */
  driver: CgroupDriver;
  controllers: string[];
}

export interface CgroupManager {
  readonly version: 1 | 2;
  /** The files that hold a cgroup's memory limit and usage (the kubepods limit is read back from them). */
  readonly memoryFiles: { limit: string; usage: string };
  /** The controllers in use. */
  controllers(): string[];
  /** Absolute directory of a cgroup (its name below the cgroup root) in one controller (any, on v2). */
  dir(controller: string, name: string[]): string;
  /**
   * Makes the cgroup and every level above it that is missing (upstream Create; libcontainer Apply).
   * `cfg`: the resources a cgroup is created with where the hierarchy takes them then (systemd's unit
   * properties); undefined for a cgroup made before, whose levels are then only made again if missing.
   */
  create(name: string[], cfg: ResourceConfig | undefined): Promise<void>;
  /** Writes the resources' files (libcontainer fs/fs2 Set); returns the error of each failed write by file. `what` names the cgroup in logs. */
  writeResources(name: string[], cfg: ResourceConfig, what: string): Promise<Map<string, string>>;
  /** New resources of a running cgroup (upstream Update): systemd's unit properties at runtime first, then the files; the failed writes by file. */
  update(name: string[], cfg: ResourceConfig, what: string): Promise<Map<string, string>>;
  /** Warns about what the cgroup lacks for its limits to be enforced (upstream cgroupV2impl Validate). */
  validate(name: string[]): Promise<void>;
  /** One of the cgroup's files, undefined when unreadable. */
  read(controller: string, name: string[], file: string): Promise<string | undefined>;
  /** The directory names of the cgroup's children ([] when it does not exist). */
  children(name: string[]): Promise<string[]>;
  /** Removes the cgroup, killing what is left in it (upstream Destroy); what failed, step by step. */
  destroy(name: string[]): Promise<RemovalFailure[]>;
  close(): void;
}

/** How a directory back end (fs, fs2) lays a cgroup out: its directories and how its resources are written. */
export interface DirectoryLayout {
  controllers: string[];
  dir: CgroupManager["dir"];
  /** The cgroup's directories, one per controller on v1 (named), one on v2. */
  dirs(name: string[]): { controller?: string; dir: string }[];
  /** The directory whose children are listed, undefined without any controller. */
  listDir(name: string[]): string | undefined;
  writeResources: CgroupManager["writeResources"];
}

/** What the directory back ends (fs, fs2) do alike over their layout. */
export function directoryCgroupManager(
  layout: DirectoryLayout,
): Pick<CgroupManager, "controllers" | "dir" | "writeResources" | "update" | "read" | "children" | "destroy" | "close"> {
  const { dir, writeResources } = layout;
  return {
    controllers: () => layout.controllers,
    dir,
    writeResources,
    update: (name, cfg, what) => writeResources(name, cfg, what),
    read: (controller, name, file) => readCgroupFile(join(dir(controller, name), file)),
    async children(name) {
      const d = layout.listDir(name);
      return d === undefined ? [] : childDirs(d);
    },
    async destroy(name) {
      const failures: RemovalFailure[] = [];
      for (const { controller, dir } of layout.dirs(name)) {
        try {
          await removeCgroupDir(dir);
        } catch (e) {
          failures.push({ controller, error: (e as Error).message });
        }
      }
      return failures;
    },
    close() {},
  };
}

/** The directory names below `d`, [] when it cannot be read (not created yet). */
async function childDirs(d: string): Promise<string[]> {
  try {
    return (await readdir(d, { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => e.name);
  } catch {
    return [];
  }
}

/** One file of a cgroup's resources: its path, its name (memory.max) and the value written. */
export interface CgroupFile {
  path: string;
  file: string;
  value: string;
}

/**
 * Writes the files in order; a failed write is handed to `failed`, which reports it and returns the
 * error to record, and the others are still written. Returns the recorded errors by file name.
 */
export async function writeCgroupFiles(
  files: CgroupFile[],
  failed: (f: CgroupFile, e: NodeJS.ErrnoException) => Promise<string> | string,
): Promise<Map<string, string>> {
  const errors = new Map<string, string>();
  for (const f of files) {
    try {
      await writeFile(f.path, f.value);
    } catch (e) {
      errors.set(f.file, await failed(f, e as NodeJS.ErrnoException));
    }
  }
  return errors;
}

/** A cgroup file's text, undefined when it cannot be read. */
export const readCgroupFile = (path: string): Promise<string | undefined> => readFile(path, "utf8").catch(() => undefined);

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
