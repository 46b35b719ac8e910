// Disk usage of a directory tree the way `du` (and upstream pkg/volume/util/fs DiskUsage) counts it:
// allocated blocks × 512 bytes and one inode per distinct file or directory (hard links once).
// A walk is bounded (maxEntries) and cached: a volume directory is re-walked at most every ttlMs,
// and a stale value is served while the refresh runs, so a summary never waits on a big tree twice.
import { lstatSync, readdirSync, type Stats } from "node:fs";
import { lstat, readdir } from "node:fs/promises";
import { join } from "node:path";

export interface DirUsage {
  usedBytes: number;
  inodesUsed: number;
  /** The walk stopped at maxEntries; the figures are a lower bound. */
  truncated: boolean;
}

export const DEFAULT_MAX_ENTRIES = 200_000;
export const DEFAULT_DIR_USAGE_TTL_MS = 10_000;

/** Bytes a file occupies on disk (du semantics; st_blocks is always in 512-byte units). */
export function allocatedBytes(st: Pick<Stats, "blocks">): number {
  return st.blocks * 512;
}

/**
 * Walks `root` (not following symlinks, not crossing into other directories' errors: an entry that
 * vanishes mid-walk is skipped). Throws only when `root` itself cannot be read (ENOENT etc.).
 */
export async function walkDirUsage(root: string, opts: { maxEntries?: number } = {}): Promise<DirUsage> {
  const max = opts.maxEntries ?? DEFAULT_MAX_ENTRIES;
  const seen = new Set<string>();
  const rootSt = await lstat(root);
  const out: DirUsage = { usedBytes: allocatedBytes(rootSt), inodesUsed: 1, truncated: false };
  seen.add(`${rootSt.dev}:${rootSt.ino}`);
  if (!rootSt.isDirectory()) return out;
  const queue: string[] = [root];
  let entries = 0;
  while (queue.length > 0) {
    const dir = queue.pop()!;
    let names: string[];
    try {
      names = await readdir(dir);
    } catch (e) {
      if (dir === root) throw e;
      continue;
    }
    for (const name of names) {
      if (++entries > max) {
        out.truncated = true;
        return out;
      }
      const p = join(dir, name);
      let st: Stats;
      try {
        st = await lstat(p);
      } catch {
        continue; // removed while walking
      }
      const key = `${st.dev}:${st.ino}`;
      if (seen.has(key)) continue;
      seen.add(key);
      out.usedBytes += allocatedBytes(st);
      out.inodesUsed++;
      if (st.isDirectory()) queue.push(p);
    }
  }
  return out;
}

/**
 * Usage of the files directly in a directory (not recursive), plus the directory itself unless
 * filesOnly: a container's log directory holds only `<attempt>.log` and rotated
 * `<attempt>.log.<time>[.gz]` files. The listing is cached until the directory changes (its mtime or
 * inode), so a summary costs one lstat per directory and per file, not a readdir each time; file
 * sizes are always fresh (a log grows without touching its directory's mtime).
 */
export interface FlatDirUsageReader {
  usage(dir: string, opts?: { filesOnly?: boolean }): DirUsage;
  /** Drops cached listings of directories not in `keep`. */
  retain(keep: ReadonlySet<string>): void;
}

export function createFlatDirUsageReader(): FlatDirUsageReader {
  const listings = new Map<string, { stamp: string; files: string[] }>();
  return {
    usage(dir, opts = {}) {
      const dst = lstatSync(dir);
      const stamp = `${dst.ino}:${dst.mtimeMs}:${dst.size}`;
      let l = listings.get(dir);
      if (!l || l.stamp !== stamp) {
        const files = readdirSync(dir, { withFileTypes: true })
          .filter((e) => !e.isDirectory())
          .map((e) => e.name);
        l = { stamp, files };
        listings.set(dir, l);
      }
      const out: DirUsage = { usedBytes: 0, inodesUsed: 0, truncated: false };
      if (!opts.filesOnly) {
        out.usedBytes += allocatedBytes(dst);
        out.inodesUsed++;
      }
      for (const name of l.files) {
        try {
          out.usedBytes += allocatedBytes(lstatSync(join(dir, name)));
          out.inodesUsed++;
        } catch {
          // rotated away since the listing; the next mtime change refreshes it
        }
      }
      return out;
    },
    retain(keep) {
      for (const k of listings.keys()) if (!keep.has(k)) listings.delete(k);
    },
  };
}

export interface DirUsageCache {
  /**
   * Usage of `path`: the cached value when younger than ttlMs; a stale value (refreshing in the
   * background) when older; a fresh walk when none. Rejects when the walk of an unknown path fails.
   * `fresh`: a new walk (or the one running) even when the cached value is young.
   */
  get(path: string, opts?: { fresh?: boolean }): Promise<DirUsage>;
  /** Drops every cached path not in `keep` (pods that went away). */
  retain(keep: ReadonlySet<string>): void;
  size(): number;
}

export function createDirUsageCache(opts: { now?: () => number; ttlMs?: number; maxEntries?: number; walk?: typeof walkDirUsage } = {}): DirUsageCache {
  const now = opts.now ?? Date.now;
  const ttl = opts.ttlMs ?? DEFAULT_DIR_USAGE_TTL_MS;
  const walk = opts.walk ?? walkDirUsage;
  const entries = new Map<string, { value?: DirUsage; at: number; pending?: Promise<DirUsage> }>();

  const refresh = (path: string): Promise<DirUsage> => {
    const e = entries.get(path) ?? { at: 0 };
    entries.set(path, e);
    if (e.pending) return e.pending;
    const started = now();
    e.pending = walk(path, { maxEntries: opts.maxEntries })
      .then((value) => {
        // Only store if the entry was not dropped meanwhile.
        if (entries.get(path) === e) Object.assign(e, { value, at: started });
        return value;
      })
      .finally(() => {
        e.pending = undefined;
      });
    return e.pending;
  };

  return {
    get(path, getOpts) {
      const e = entries.get(path);
      if (e?.value === undefined || getOpts?.fresh) return refresh(path);
      if (now() - e.at >= ttl) {
        // Stale-while-revalidate; a failed refresh (dir removed) drops the entry.
        refresh(path).catch(() => entries.delete(path));
      }
      return Promise.resolve(e.value);
    },
    retain(keep) {
      for (const k of entries.keys()) if (!keep.has(k)) entries.delete(k);
    },
    size: () => entries.size,
  };
}
