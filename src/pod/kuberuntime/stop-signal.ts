// Pure helpers for signalling a container directly (see direct-signal.ts): which signal a stop sends
// and where the runtime's verbose status says the container's init process is.
//
// The stop signal is what containerd sends on StopContainer: the image config's StopSignal, SIGTERM
// when it has none (containerd parses it as moby's signal.ParseSignal: "SIGTERM", "TERM" or "15");
// a timeout of 0 skips it and sends SIGKILL at once.

import { isContainerCgroupLeaf } from "../../cri/container-cgroup.ts";

/** Linux signal numbers (asm-generic; x86_64 and aarch64 alike) by name without the SIG prefix. */
const SIGNALS: Readonly<Record<string, number>> = {
  HUP: 1,
  INT: 2,
  QUIT: 3,
  ILL: 4,
  TRAP: 5,
  ABRT: 6,
  IOT: 6,
  BUS: 7,
  FPE: 8,
  KILL: 9,
  USR1: 10,
  SEGV: 11,
  USR2: 12,
  PIPE: 13,
  ALRM: 14,
  TERM: 15,
  STKFLT: 16,
  CHLD: 17,
  CONT: 18,
  STOP: 19,
  TSTP: 20,
  TTIN: 21,
  TTOU: 22,
  URG: 23,
  XCPU: 24,
  XFSZ: 25,
  VTALRM: 26,
  PROF: 27,
  WINCH: 28,
  IO: 29,
  POLL: 29,
  PWR: 30,
  SYS: 31,
};

export const SIGKILL = 9;
export const SIGTERM = 15;

/** A signal name or number as an image's StopSignal spells it → its number; undefined when unknown. */
export function parseSignal(text: string): number | undefined {
  const t = text.trim().toUpperCase();
  if (/^\d+$/.test(t)) {
    const n = Number(t);
    return n >= 1 && n <= 64 ? n : undefined;
  }
  const m = /^(?:SIG)?(RTMIN|RTMAX)([+-]\d+)?$/.exec(t);
  if (m) {
    const n = (m[1] === "RTMIN" ? 34 : 64) + Number(m[2] ?? 0);
    return n >= 34 && n <= 64 ? n : undefined;
  }
  return SIGNALS[t.startsWith("SIG") ? t.slice(3) : t];
}

/** "SIGTERM" for 15, … ("SIG<n>" when unnamed): for log lines. */
export function signalName(n: number): string {
  const name = Object.entries(SIGNALS).find(([, v]) => v === n)?.[0];
  return name ? `SIG${name}` : `SIG${n}`;
}

/** The signal a stop with this grace period sends first: SIGKILL for 0, else the stop signal. */
export function firstStopSignal(graceSeconds: number, stopSignal: number): number {
  return graceSeconds <= 0 ? SIGKILL : stopSignal;
}

function verboseInfo(info: Readonly<Record<string, string>> | undefined): Record<string, unknown> | undefined {
  const text = info?.info;
  if (!text) return undefined;
  try {
    const v = JSON.parse(text) as unknown;
    return v && typeof v === "object" ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** containerd's verbose ContainerStatus info → the init process's host PID (undefined when not running or unknown). */
export function containerInitPid(info: Readonly<Record<string, string>> | undefined): number | undefined {
  const pid = verboseInfo(info)?.pid;
  return typeof pid === "number" && Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
}

/**
 * containerd's verbose ImageStatus info → the image's stop signal: SIGTERM when the image sets none,
 * undefined when the info is missing or the StopSignal cannot be parsed (then no direct signal).
 */
export function imageStopSignal(info: Readonly<Record<string, string>> | undefined): number | undefined {
  const v = verboseInfo(info);
  if (!v) return undefined;
  const spec = v.imageSpec as { config?: { StopSignal?: unknown } } | undefined;
  const s = spec?.config?.StopSignal;
  if (s === undefined || s === "") return SIGTERM;
  return typeof s === "string" ? parseSignal(s) : undefined;
}

/** /proc/<pid>/cgroup text → whether the process sits in the container's cgroup (containerCgroupLeaves: containerd's or CRI-O's, either driver). */
export function cgroupFileNamesContainer(text: string, containerId: string): boolean {
  return text.split("\n").some((line) => {
    const path = line.slice(line.indexOf(":", line.indexOf(":") + 1) + 1);
    const leaf = path.slice(path.lastIndexOf("/") + 1);
    return isContainerCgroupLeaf(leaf, containerId);
  });
}
