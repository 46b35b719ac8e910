// Atomic, durable replacement of a state or checkpoint file (upstream pkg/kubelet/util/store
// filestore.go writeFile, which the checkpoint manager, the user namespace manager and the node
// shutdown manager's atomicWrite all do the same way): the content goes to a temporary file beside
// the target, created with the target's mode, is fsynced and closed, then renamed over the target, so
// a crash leaves the old file or the new one, never a torn one. With `syncDir` the directory is
// fsynced too, so the rename itself survives a crash (upstream userns_manager writeMappingsToFile).
// A write that fails removes its temporary file and throws the file system's error unchanged.
//
// Not the projected volumes' AtomicWriter (src/pod/volumes/atomic-writer.ts), which swaps a whole
// directory through the `..data` symlink.
import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { open, rename, rm } from "node:fs/promises";
import { dirname } from "node:path";

export interface AtomicWriteOptions {
  /** Permission bits of the file, before the umask, as for open(2); default 0o666 (as writeFile). */
  mode?: number;
  /** Fsync the directory after the rename, so the new entry is durable too; default false. */
  syncDir?: boolean;
  /** The temporary file, in the target's directory; default `<path>.tmp`. */
  tmpPath?: string;
}

const DEFAULT_MODE = 0o666;

/** Replaces `path` with `data` atomically and durably, without blocking the event loop. */
export async function writeFileAtomic(path: string, data: string | Uint8Array, opts: AtomicWriteOptions = {}): Promise<void> {
  const tmp = opts.tmpPath ?? `${path}.tmp`;
  const fh = await open(tmp, "w", opts.mode ?? DEFAULT_MODE);
  try {
    try {
      await fh.writeFile(data);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, path);
  } catch (e) {
    await rm(tmp, { force: true }).catch(() => undefined);
    throw e;
  }
  if (opts.syncDir) await syncDir(dirname(path));
}

/** writeFileAtomic for a caller whose file must change together with its in-memory state (it blocks). */
export function writeFileAtomicSync(path: string, data: string | Uint8Array, opts: AtomicWriteOptions = {}): void {
  const tmp = opts.tmpPath ?? `${path}.tmp`;
  const fd = openSync(tmp, "w", opts.mode ?? DEFAULT_MODE);
  try {
    try {
      writeFileSync(fd, data);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  } catch (e) {
    try {
      rmSync(tmp, { force: true });
    } catch {
      // the error that matters is the write's
    }
    throw e;
  }
  if (opts.syncDir) syncDirSync(dirname(path));
}

async function syncDir(dir: string): Promise<void> {
  const dh = await open(dir, "r");
  try {
    await dh.sync();
  } finally {
    await dh.close();
  }
}

function syncDirSync(dir: string): void {
  const fd = openSync(dir, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
