// Test cgroups: uniquely named (pid + counter) under the v1 memory controller, always with a memory
// limit so a runaway child can never pressure the host, and removed even when a test fails.
import { existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export const MEMORY_ROOT = "/sys/fs/cgroup/memory";
export const UNIFIED_ROOT = "/sys/fs/cgroup/unified";

let counter = 0;

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

/** Kills remaining members and removes the cgroup directory, retrying while they exit. */
export async function removeCgroup(path: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (!existsSync(path)) return;
    try {
      for (const pid of readFileSync(join(path, "cgroup.procs"), "utf8").split("\n").filter(Boolean)) {
        try {
          process.kill(Number(pid), "SIGKILL");
        } catch {}
      }
    } catch {}
    try {
      rmdirSync(path);
      return;
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === "ENOENT") return;
      if (Date.now() > deadline) throw new Error(`cannot remove test cgroup ${path}: ${code}`);
      await Bun.sleep(20);
    }
  }
}

/** Polls `cond` until true or the timeout; throws with `what` on timeout. */
export async function waitFor(cond: () => boolean, what: string, timeoutMs = 5000, intervalMs = 5): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await Bun.sleep(intervalMs);
  }
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

/**
 * Open eventfd and epoll fds of this process. Counting only these kinds keeps fd-leak checks
 * immune to pipes and sockets that other tests' children close asynchronously.
 */
export function notifierFds(): number {
  let n = 0;
  for (const fd of readdirSync("/proc/self/fd")) {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      if (target === "anon_inode:[eventfd]" || target === "anon_inode:[eventpoll]") n++;
    } catch {}
  }
  return n;
}
