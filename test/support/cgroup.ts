// Test cgroups: uniquely named (pid + counter) under the v1 memory controller, always with a memory
// limit so a runaway child can never pressure the host, and removed even when a test fails.
import { existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pollUntil } from "./wait.ts";

export const CGROUP_MOUNT = "/sys/fs/cgroup";
export const MEMORY_ROOT = "/sys/fs/cgroup/memory";
export const UNIFIED_ROOT = "/sys/fs/cgroup/unified";

let counter = 0;

/** The slices the systemd driver starts (stopped after a test: that removes their cgroups and kills what is left). */
export const KUBEPODS_SLICES = ["kubepods-burstable.slice", "kubepods-besteffort.slice", "kubepods.slice"];

/** Stops the kubepods slices (their cgroups go with them). */
export function stopKubepodsSlices(): void {
  for (const u of KUBEPODS_SLICES) Bun.spawnSync(["systemctl", "stop", u]);
}

/** True when this process may create memory cgroups (root with the v1 memory controller mounted). */
export function canManageMemoryCgroups(): boolean {
  return process.getuid?.() === 0 && existsSync(join(MEMORY_ROOT, "cgroup.event_control"));
}

export interface TestCgroup {
  path: string;
  /** Moves a process into this cgroup. */
  addProcess(pid: number): void;
  read(file: string): string;
  write(file: string, value: string): void;
  /** Kills what is left inside, then rmdir with a short retry; idempotent. */
  remove(): Promise<void>;
}

export function makeMemoryCgroup(opts: { limitBytes?: number; root?: string; prefix?: string } = {}): TestCgroup {
  const root = opts.root ?? MEMORY_ROOT;
  const path = join(root, `${opts.prefix ?? "bunlet-test"}-${process.pid}-${++counter}`);
  mkdirSync(path);
  const cg: TestCgroup = {
    path,
    addProcess(pid) {
      writeFileSync(join(path, "cgroup.procs"), `${pid}\n`);
    },
    read(file) {
      return readFileSync(join(path, file), "utf8");
    },
    write(file, value) {
      writeFileSync(join(path, file), value);
    },
    remove: () => removeCgroup(path),
  };
  if (root === MEMORY_ROOT) cg.write("memory.limit_in_bytes", String(opts.limitBytes ?? 512 * 1024 * 1024));
  return cg;
}

/** SIGKILLs the processes left in the cgroup at `path` (none when it is gone). */
function killMembers(path: string): void {
  let procs: string;
  try {
    procs = readFileSync(join(path, "cgroup.procs"), "utf8");
  } catch {
    return;
  }
  for (const pid of procs.split("\n").filter(Boolean)) {
    try {
      process.kill(Number(pid), "SIGKILL");
    } catch {}
  }
}

/** One rmdir of a cgroup: true when it is gone, else the error code (EBUSY while members exit). */
function tryRmdir(path: string): true | string {
  try {
    rmdirSync(path);
    return true;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? String(e);
    return code === "ENOENT" ? true : code;
  }
}

/** Kills remaining members and removes the cgroup directory, retrying while they exit. */
export async function removeCgroup(path: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (!existsSync(path)) return;
    killMembers(path);
    const r = tryRmdir(path);
    if (r === true) return;
    if (Date.now() > deadline) throw new Error(`cannot remove test cgroup ${path}: ${r}`);
    await Bun.sleep(20);
  }
}

/** Every cgroup hierarchy mounted under /sys/fs/cgroup, each once (cpu, cpuacct and cpu,cpuacct are one). */
function hierarchies(): string[] {
  // cgroup v2 only (the v2 guest, a v2 host): one hierarchy, the mount itself.
  if (existsSync(join(CGROUP_MOUNT, "cgroup.controllers"))) return [CGROUP_MOUNT];
  const seen = new Set<string>();
  const out: string[] = [];
  for (const c of readdirSync(CGROUP_MOUNT)) {
    const p = join(CGROUP_MOUNT, c);
    try {
      const st = statSync(p);
      if (!st.isDirectory() || !existsSync(join(p, "cgroup.procs"))) continue;
      const key = `${st.dev}:${st.ino}`;
      if (seen.has(key)) continue;
      seen.add(key);
      out.push(p);
    } catch {}
  }
  return out;
}

/** Creates `relPath` in every hierarchy (the upstream kubelet wants its cgroupRoot to exist in each). */
export function createCgroupTree(relPath: string): void {
  for (const ctl of hierarchies()) mkdirSync(join(ctl, relPath), { recursive: true });
}

/**
 * Removes the cgroup subtree `relPath` (e.g. a test's cgroupRoot) in every hierarchy, deepest first:
 * kills what is left in each cgroup (only the caller's own pods live there) and retries rmdir while
 * they exit (EBUSY), `attempts` times 20 ms. Returns what could not be removed (empty when all is gone).
 */
export function removeCgroupTree(relPath: string, attempts = 100): string[] {
  const problems: string[] = [];
  for (const ctl of hierarchies()) {
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
      let r: true | string = "not tried";
      for (let i = 0; i < attempts; i++) {
        killMembers(d);
        r = tryRmdir(d);
        if (r === true) break;
        Bun.sleepSync(20);
      }
      if (r !== true) problems.push(`could not remove cgroup ${d}: ${r}`);
    }
  }
  return problems;
}

/** Polls `cond` until true or the timeout (default 5 s, every 5 ms); throws with `what` on timeout. */
export function waitFor(cond: () => boolean, what: string, timeoutMs = 5000, intervalMs = 5): Promise<void> {
  return pollUntil(cond, what, timeoutMs, intervalMs);
}

/**
 * A child that charges memory to `cgroup`: it joins the cgroup first (a shell writes its own pid,
 * then execs), then touches `megabytes` MiB and waits on stdin until killed.
 */
export function spawnMemoryHog(cgroup: TestCgroup, megabytes: number): Bun.Subprocess<"pipe", "pipe", "inherit"> {
  const script =
    `echo $$ > ${join(cgroup.path, "cgroup.procs")} && exec ${process.execPath} -e ` +
    `'const b = Buffer.alloc(${megabytes} * 1048576, 1); process.stdout.write("ready\\n"); ` +
    `process.stdin.on("data", () => {}); setInterval(() => b[0]++, 1e6)'`;
  return Bun.spawn(["sh", "-c", script], { stdin: "pipe", stdout: "pipe", stderr: "inherit" });
}

export type NotifierFdKind = "eventfd" | "eventpoll";

/** Open eventfd and epoll fds of this process: fd number → kind. */
export function notifierFdTable(): Record<number, NotifierFdKind> {
  const table: Record<number, NotifierFdKind> = {};
  for (const fd of readdirSync("/proc/self/fd")) {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      if (target === "anon_inode:[eventfd]") table[Number(fd)] = "eventfd";
      else if (target === "anon_inode:[eventpoll]") table[Number(fd)] = "eventpoll";
    } catch {}
  }
  return table;
}

/**
 * Number of open eventfd and epoll fds of this process. Process-wide: Bun's own threads and other
 * test files' Workers open and close these asynchronously, so exact fd-leak checks belong in an
 * isolated child process (runFdFixture).
 */
export function notifierFds(): number {
  return Object.keys(notifierFdTable()).length;
}

/** Fds in `now` that are not in `base` (ascending). */
export function fdsAdded(base: Record<number, NotifierFdKind>, now: Record<number, NotifierFdKind>): number[] {
  return Object.keys(now)
    .map(Number)
    .filter((fd) => base[fd] !== now[fd])
    .sort((a, b) => a - b);
}

/** The fds an epoll set watches (its `tfd:` lines in /proc/self/fdinfo), ascending. */
export function epollWatchedFds(epfd: number): number[] {
  return [...readFileSync(`/proc/self/fdinfo/${epfd}`, "utf8").matchAll(/^tfd:\s*(\d+)/gm)].map((m) => Number(m[1])).sort((a, b) => a - b);
}

/** Threads of this process named `comm` (Bun names Worker threads "Worker"); with `wchan`, only those blocked in it. */
export function threadCount(comm: string, wchan?: string): number {
  return readdirSync("/proc/self/task").filter((t) => {
    try {
      if (readFileSync(`/proc/self/task/${t}/comm`, "utf8").trim() !== comm) return false;
      return wchan === undefined || readFileSync(`/proc/self/task/${t}/wchan`, "utf8").includes(wchan);
    } catch {
      return false;
    }
  }).length;
}

/**
 * Runs a fixture script in its own Bun process, where no other test's Workers or runtime threads
 * open and close fds, and returns the JSON it prints as its last stdout line.
 */
export async function runFdFixture<T>(script: string, args: string[] = [], timeoutMs = 20_000): Promise<T> {
  const child = Bun.spawn([process.execPath, script, ...args], { stdout: "pipe", stderr: "pipe", stdin: "ignore" });
  const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
  try {
    const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
    if (code !== 0) throw new Error(`fixture ${script} exited with ${code ?? child.signalCode}:\n${err}${out}`);
    const last = out.trim().split("\n").at(-1) ?? "";
    return JSON.parse(last) as T;
  } finally {
    clearTimeout(timer);
  }
}
