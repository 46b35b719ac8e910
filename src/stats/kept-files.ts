// Files the eviction path reads on every cycle (memory.usage_in_bytes, memory.stat, memory.limit_in_bytes
// of the root, kubepods and each pod cgroup), kept open and re-read with pread at offset 0 — cgroupfs
// regenerates a seq_file's content on every read from 0 — so a process that ran out of file
// descriptors (a connection flood, EMFILE) still sees memory pressure (test/stats/fd-flood.test.ts). Also one
// open(2) fewer per file per read. A file whose cgroup went away (ENODEV/ENOENT on read) is closed and
// reopened once; forget() closes a removed pod's files; at most `max` files stay open (least recent go).
import { closeSync, fstatSync, openSync, readSync, statfsSync } from "node:fs";

export interface KeptFiles {
  /** The file's whole text; throws like readFileSync (ENOENT when it does not exist). */
  read(path: string): string;
  /** Closes the files under `dir`. */
  forget(dir: string): void;
  close(): void;
  size(): number;
}

const GONE = new Set(["ENODEV", "ENOENT", "EBADF", "ESTALE"]);
/** cgroup v1 and v2 filesystems: a removed cgroup's open file fails its read (ENODEV). */
const CGROUP_FS = new Set([0x27e0eb, 0x63677270]);

/** Whether a kept fd must be fstat'ed before each read to notice its file was removed (not on cgroupfs). */
function needsLinkCheck(path: string): boolean {
  try {
    return !CGROUP_FS.has(Number(statfsSync(path).type));
  } catch {
    return true;
  }
}

export function createKeptFiles(max = 1024): KeptFiles {
  const fds = new Map<string, number>();
  // Per path: fstat before each read (regular files) or not (cgroupfs: an fstat per read was ~3 % of
  // the idle agent's profile with 100 pods).
  const linkChecked = new Map<string, boolean>();
  let buf = Buffer.allocUnsafe(8192);

  const drop = (path: string) => {
    const fd = fds.get(path);
    if (fd === undefined) return;
    fds.delete(path);
    linkChecked.delete(path);
    try {
      closeSync(fd);
    } catch {
      // already closed
    }
  };

  const readAll = (fd: number): string => {
    let off = 0;
    for (;;) {
      if (off === buf.length) {
        const bigger = Buffer.allocUnsafe(buf.length * 2);
        buf.copy(bigger);
        buf = bigger;
      }
      const n = readSync(fd, buf, off, buf.length - off, off);
      if (n === 0) return buf.toString("utf8", 0, off);
      off += n;
    }
  };

  const open = (path: string): number => {
    const fd = openSync(path, "r");
    fds.set(path, fd);
    if (!linkChecked.has(path)) linkChecked.set(path, needsLinkCheck(path));
    while (fds.size > max) drop(fds.keys().next().value!);
    return fd;
  };

  return {
    read(path) {
      const kept = fds.get(path);
      if (kept !== undefined) {
        // Most recently used last, so the least recent is dropped first.
        fds.delete(path);
        fds.set(path, kept);
        try {
          // A removed regular file still reads through its fd (cgroupfs answers ENODEV instead).
          if (linkChecked.get(path) !== false && fstatSync(kept).nlink === 0) throw Object.assign(new Error("file removed"), { code: "ENOENT" });
          return readAll(kept);
        } catch (e) {
          if (!GONE.has((e as NodeJS.ErrnoException).code ?? "")) throw e;
          drop(path); // the cgroup was removed (and maybe recreated): open the path again
        }
      }
      const fd = open(path);
      try {
        return readAll(fd);
      } catch (e) {
        drop(path);
        throw e;
      }
    },
    forget(dir) {
      const prefix = dir.endsWith("/") ? dir : `${dir}/`;
      for (const p of [...fds.keys()]) if (p.startsWith(prefix)) drop(p);
    },
    close() {
      for (const p of [...fds.keys()]) drop(p);
    },
    size: () => fds.size,
  };
}
