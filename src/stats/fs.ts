// Filesystem stats from statfs(2), in Summary API FsStats shape (as cAdvisor's GetFsInfo):
// capacity = blocks × bsize, available = bavail × bsize (what unprivileged users can still write,
// as `df` shows), used = (blocks − bfree) × bsize, inodes = files, inodesFree = ffree.
import { statfs, type Statfs } from "../../ffi/libc.ts";
import type { FsStats } from "./summary.ts";

/** Pure: statfs numbers → FsStats at `time`. */
export function fsStatsFromStatfs(s: Statfs, time: string): FsStats {
  const bs = s.bsize;
  return {
    time,
    availableBytes: s.bavail * bs,
    capacityBytes: s.blocks * bs,
    usedBytes: (s.blocks - s.bfree) * bs,
    inodesFree: s.ffree,
    inodes: s.files,
    inodesUsed: Math.max(0, s.files - s.ffree),
  };
}

/** statfs of the filesystem holding `path`; throws SyscallError naming the path. */
export function fsStats(path: string, time: string): FsStats {
  return fsStatsFromStatfs(statfs(path), time);
}
