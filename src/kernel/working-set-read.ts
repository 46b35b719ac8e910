// What the working-set thread (working-set-worker.ts) reads, each file kept open and read from offset 0
// into one reused buffer: a target's usage and inactive_file — memory.current and memory.stat of a
// cgroup v2 directory, or /proc/meminfo for the node (cgroup v2 has no memory.current at the root) —
// and the thread's own CPU accounting (/proc/thread-self/schedstat) and major faults (…/stat).
import { closeSync, openSync, readSync } from "node:fs";
import type { FastCpuSpan } from "./fast-evict.ts";
import { parseProcStat } from "./proc-stat.ts";
import type { WorkingSetTarget } from "./working-set-protocol.ts";

const buf = new Uint8Array(16384);
const decoder = new TextDecoder();
const readAt0 = (fd: number) => decoder.decode(buf.subarray(0, readSync(fd, buf, 0, buf.byteLength, 0)));

/** A /proc/meminfo field in bytes (0 when absent). */
export const meminfoBytes = (text: string, key: string) => Number(new RegExp(`^${key.replace(/[()]/g, "\\$&")}:\\s+(\\d+)`, "m").exec(text)?.[1] ?? 0) * 1024;

/** A target with its files open: usage and stat are the same fd for /proc/meminfo. */
export interface TargetFiles {
  t: WorkingSetTarget;
  usageFd: number;
  statFd: number;
}

/** Opens a target's files; throws (nothing left open) when one cannot be. */
export function openTargetFiles(t: WorkingSetTarget): TargetFiles {
  if (t.source === "meminfo") {
    const fd = openSync("/proc/meminfo", "r");
    return { t, usageFd: fd, statFd: fd };
  }
  const usageFd = openSync(`${t.source.cgroupDir}/memory.current`, "r");
  try {
    return { t, usageFd, statFd: openSync(`${t.source.cgroupDir}/memory.stat`, "r") };
  } catch (e) {
    closeSync(usageFd);
    throw e;
  }
}

/** Closes what openTargetFiles opened. */
export function closeTargetFiles(f: TargetFiles): void {
  closeSync(f.usageFd);
  if (f.statFd !== f.usageFd) closeSync(f.statFd);
}

/** [usage, inactive_file or undefined when only usage was read]. */
export function readUsage(f: TargetFiles, withStat: boolean): [number, number | undefined] {
  if (f.t.source === "meminfo") {
    const m = readAt0(f.usageFd);
    return [meminfoBytes(m, "MemTotal") - meminfoBytes(m, "MemFree"), meminfoBytes(m, "Inactive(file)")];
  }
  const usage = Number(readAt0(f.usageFd).trim());
  if (!withStat) return [usage, undefined];
  const inactive = Number(/^inactive_file (\d+)$/m.exec(readAt0(f.statFd))?.[1] ?? 0);
  return [usage, inactive];
}

/** ms rounded to the µs, for the posts. */
export const us = (ms: number) => Math.round(ms * 1000) / 1000;

/**
 * This thread's schedstat (/proc/thread-self/schedstat: ns on the CPU, ns runnable but waiting for it,
 * timeslices), read when it goes to sleep and again when it woke late: a late wake-up whose wait grew by
 * as much was a thread ready but not given the CPU; one whose wait did not, a wake-up that did not come.
 */
let schedstatFd: number | undefined;
/** This thread's CPU accounting at one moment: wall ms (performance.now()), ns on the CPU, ns runnable. */
export interface SchedMark {
  atMs: number;
  runNs: number;
  waitNs: number;
}
/** The thread's CPU accounting now; undefined when unreadable. */
export function schedMark(): SchedMark | undefined {
  try {
    schedstatFd ??= openSync("/proc/thread-self/schedstat", "r");
    const [run, wait] = readAt0(schedstatFd).split(" ");
    const mark: SchedMark = { atMs: performance.now(), runNs: Number(run), waitNs: Number(wait) };
    return Number.isFinite(mark.runNs) && Number.isFinite(mark.waitNs) ? mark : undefined;
  } catch {
    return undefined;
  }
}
/** From mark a to b: wall ms, ms on the CPU, ms runnable but off it. */
export function schedSpan(a: SchedMark, b: SchedMark): FastCpuSpan {
  return { ms: us(b.atMs - a.atMs), runMs: us((b.runNs - a.runNs) / 1e6), runnableMs: us((b.waitNs - a.waitNs) / 1e6) };
}
/**
 * Major faults (field 12 of /proc/thread-self/stat, or /proc/self/stat for the whole process), NaN when
 * unreadable: pages of the binary read back from disk while the thread decides or waits for the victim (on
 * the v2 guest's hostfs such a read holds its one CPU). Read only around a fired decision and after each
 * rehearsal, never per poll.
 */
const statFds: { thread?: number; process?: number } = {};
export function majflt(of: "thread" | "process"): number {
  try {
    const fd = (statFds[of] ??= openSync(of === "thread" ? "/proc/thread-self/stat" : "/proc/self/stat", "r"));
    return parseProcStat(readAt0(fd)).majorFaults;
  } catch {
    return Number.NaN;
  }
}
