// The messages between the working-set watch (working-set-watch.ts, main thread) and its thread
// (working-set-worker.ts): what to watch and how to poll it in, crossings, reads and errors out.
import type { FastOutcome } from "./fast-evict.ts";
import type { BoostSpec, PriorityOutcome } from "./thread-priority.ts";

export interface WorkingSetTarget {
  id: string;
  /** "meminfo" for the node (cgroup v2 has no memory.current at the root), else a cgroup v2 directory. */
  source: "meminfo" | { cgroupDir: string };
  /** Fire when usage − inactive_file ≥ this. */
  lineBytes: number;
  /** The token a fast eviction plan names this target by (fast-evict.ts); none: never decided here. */
  token?: number;
}

export interface WorkingSetPollSettings {
  /** The interval at the line: the latency bound while growth stays under maxGrowthBytesPerSec. */
  minIntervalMs: number;
  /** The interval far from the line. */
  maxIntervalMs: number;
  /** The fastest growth the schedule is made for: next poll after headroom ÷ this, clamped. */
  maxGrowthBytesPerSec: number;
  /** How often inactive_file is re-read while under the line. */
  statRefreshMs: number;
  /**
   * While the working set stays over the line, the crossing is posted again this often: a cycle that
   * read the stats a hair under the line (the usage moves between two reads) is retried this soon
   * instead of at the next periodic synchronize. 0: once per up-crossing only.
   */
  renotifyMs: number;
  /**
   * A fast eviction that steps aside because it finds no hard threshold met (NOT_MET_AT_WAKE_UP: the node's,
   * judged on root memory.stat while /proc/meminfo is over the line) is retried at each read over the line, the
   * crossing not posted, for up to this many ms from the first such step-aside of an up-crossing; then
   * the crossing is posted (and the main thread's cycle decides). 0 or absent: posted at once.
   */
  notMetRetryMs?: number;
  /** Post every read (tests and debugging: a way to know the watch has seen a state). */
  reportReads?: boolean;
  /**
   * An imminent crossing: when the growth between the last two timed reads projects the line within
   * this many ms, the thread polls it without its timer (see the header). 0 or absent: never.
   */
  imminentHorizonMs?: number;
  /** The longest such episode (default 30 ms). */
  imminentCapMs?: number;
  /** At most this many ms of episodes per second (default 60: ≤ 6 % of a CPU however the usage moves). */
  imminentBudgetMsPerSec?: number;
  /** How an episode waits between reads (default: "spin" with more than one CPU, else "sleep" 1 ms). */
  imminentWait?: "spin" | "sleep";
}

export type WorkingSetWorkerIn =
  /** Sent first, and not counted in it: the mailbox and the eventfd signalled after each post (see run()). */
  | { type: "mailbox"; buffer: SharedArrayBuffer; wakeFd: number }
  /** Sent once, before the first "targets": this thread's nice value, the boost on a crossing. */
  | { type: "priority"; threadNice?: number; threadRealtime?: number; boost?: BoostSpec }
  | { type: "targets"; targets: WorkingSetTarget[]; settings: WorkingSetPollSettings }
  /** The main thread's eviction plan (fast-evict.ts) and the QoS directories whose link counts it checks. */
  | { type: "fastPlan"; buffer: SharedArrayBuffer; dirs: string[] }
  | { type: "stop" };

export interface WorkingSetCrossing {
  id: string;
  /** Wall-clock ms (preciseNow) of the read that saw the crossing. */
  atMs: number;
  usageBytes: number;
  inactiveFileBytes: number;
  workingSetBytes: number;
  lineBytes: number;
  /** A re-post while still over the line (renotifyMs), not a new up-crossing. */
  repeat: boolean;
  /** ms since the target's previous read: the most the crossing can have waited to be seen. */
  gapMs?: number;
  /** Seen inside an imminent-crossing episode: its reads so far and ms since it began. */
  imminent?: { reads: number; ms: number };
  /** Posted after silent retries of the fast eviction (notMetRetryMs): how many, over how many ms since the first, and why the first was not met. */
  notMet?: { retries: number; ms: number; first?: string };
  /**
   * Where a long gap went (a timed read): how late this read came after it was due, and how long its
   * syscalls took (the 1.4 s gaps of the Worker-timer days: 1393 ms late, read 0.1 ms).
   */
  timerLateMs?: number;
  readTookMs?: number;
  /** Of a wake-up ≥ 20 ms late: the ms this thread spent runnable, waiting for the CPU, in that sleep. */
  lateRunnableMs?: number;
}

export type WorkingSetWorkerOut =
  /** fast: what the planned eviction did at this crossing, when the target's token is in the armed plan. */
  | { type: "crossed"; crossing: WorkingSetCrossing; fast?: FastOutcome }
  /** timed: a read of the schedule; false: an imminent-crossing episode's. */
  | { type: "read"; id: string; usageBytes: number; workingSetBytes: number; timed: boolean; atMs: number }
  /** A target whose files could not be read (removed cgroup…); it is dropped until the next "targets". */
  | { type: "error"; id: string; message: string }
  /** The outcome of threadNice (and the first boost failure, if any): for one log line. */
  | ({ type: "priority" } & PriorityOutcome)
  | { type: "stopped" };
