// Host facts and cgroup v1 files the scenarios read and clean up (only below their own cgroupRoot).
import { existsSync, readdirSync, readFileSync, rmdirSync, statSync } from "node:fs";
import { join } from "node:path";

export const MIB = 1024 * 1024;
export const CGROUP_MOUNT = "/sys/fs/cgroup";

/** Reads a cgroup v1 file, undefined when the cgroup or file is gone. */
export function readCgroupFile(dir: string, file: string): string | undefined {
  try {
    return readFileSync(join(dir, file), "utf8");
  } catch {
    return undefined;
  }
}

/** Parses "key value" lines (memory.stat, memory.oom_control). */
export function flatKeyed(text: string | undefined): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of (text ?? "").split("\n")) {
    const [k, v] = line.trim().split(/\s+/);
    if (k && v !== undefined && Number.isFinite(Number(v))) out[k] = Number(v);
  }
  return out;
}

/** Total OOM kills the kernel reports (/proc/vmstat oom_kill, kernel ≥ 4.13). */
export function hostOomKills(): number {
  return flatKeyed(readFileSync("/proc/vmstat", "utf8")).oom_kill ?? 0;
}

export function memTotalBytes(): number {
  const m = /^MemTotal:\s+(\d+) kB$/m.exec(readFileSync("/proc/meminfo", "utf8"));
  if (!m) throw new Error("/proc/meminfo has no MemTotal line");
  return Number(m[1]) * 1024;
}

/** Tasks on the node as bunlet's pid.available counts them (/proc/loadavg field 4). */
export function hostTaskCount(): number {
  const m = /\s\d+\/(\d+)\s/.exec(readFileSync("/proc/loadavg", "utf8"));
  return m ? Number(m[1]) : 0;
}

export function hostMaxPid(): number {
  const n = (p: string) => Number(readFileSync(p, "utf8").trim());
  return Math.min(n("/proc/sys/kernel/pid_max"), n("/proc/sys/kernel/threads-max"));
}

/** Every v1 controller hierarchy directory (cpu,cpuacct counted once). */
function controllerDirs(): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const c of readdirSync(CGROUP_MOUNT)) {
    const p = join(CGROUP_MOUNT, c);
    try {
      if (!statSync(p).isDirectory() || !existsSync(join(p, "cgroup.procs"))) continue;
      const key = `${statSync(p).dev}:${statSync(p).ino}`;
      if (seen.has(key)) continue;
      seen.add(key);
      out.push(p);
    } catch {}
  }
  return out;
}

/** Kills what is left in a cgroup subtree (only our own pods' processes live there) and removes it bottom-up. */
export function removeCgroupTree(relPath: string): string[] {
  const problems: string[] = [];
  for (const ctl of controllerDirs()) {
    const top = join(ctl, relPath);
    if (!existsSync(top)) continue;
    const dirs: string[] = [];
    const walk = (d: string) => {
      dirs.push(d);
      for (const e of readdirSync(d, { withFileTypes: true })) if (e.isDirectory()) walk(join(d, e.name));
    };
    try {
      walk(top);
    } catch {}
    for (const d of dirs.reverse()) {
      let ok = false;
      for (let i = 0; i < 100 && !ok; i++) {
        for (const pid of (readCgroupFile(d, "cgroup.procs") ?? "").split("\n").filter(Boolean)) {
          try {
            process.kill(Number(pid), "SIGKILL");
          } catch {}
        }
        try {
          rmdirSync(d);
          ok = true;
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code === "ENOENT") ok = true;
          else Bun.sleepSync(20);
        }
      }
      if (!ok) problems.push(`could not remove cgroup ${d}`);
    }
  }
  return problems;
}
