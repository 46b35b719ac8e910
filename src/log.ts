// The one logger: consola's core (no fancy reporter: it costs ~15 MB RSS and ~50 ms of startup) with a
// klog-style one-line reporter on stderr, as the kubelet logs, so every decision is one grep-able line:
//   I1129 10:42:00.123456   4242] evicting pod=default/hog signal=memory.available observed=80Mi
//
// Lines are stamped when logged but formatted and written once per event-loop turn (setImmediate),
// so a decision's log lines never delay its action: the eviction fast path (kernel event → stop
// signal, one turn of microtasks) logs five lines, which cost 0.5–2 ms written inline. `flushLog()`
// writes what is pending at once (before a direct stderr write, so the order holds); pending lines
// are written synchronously when the process exits.
import { createConsola, type ConsolaReporter, type LogObject } from "consola/core";
import { writeSync } from "node:fs";
import { format } from "node:util";

const LEVEL_LETTER: Record<string, string> = {
  fatal: "F",
  error: "E",
  warn: "W",
  log: "I",
  info: "I",
  success: "I",
  fail: "E",
  ready: "I",
  start: "I",
  box: "I",
  debug: "I",
  trace: "I",
  verbose: "I",
};

const pad = (n: number, w = 2) => String(n).padStart(w, "0");

/** Formats one log line: level letter, MMDD hh:mm:ss.uuuuuu, pid, message. */
export function formatLogLine(obj: Pick<LogObject, "type" | "date" | "args" | "tag">, pid = process.pid): string {
  const d = obj.date;
  const stamp = `${pad(d.getMonth() + 1)}${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}000`;
  const msg = format(...(obj.args as unknown[]));
  const tag = obj.tag ? `${obj.tag}: ` : "";
  return `${LEVEL_LETTER[obj.type] ?? "I"}${stamp} ${String(pid).padStart(7)}] ${tag}${msg}`;
}

const pending: LogObject[] = [];
let flushScheduled = false;

function takePending(): string {
  let text = "";
  for (const obj of pending) text += `${formatLogLine(obj)}\n`;
  pending.length = 0;
  return text;
}

/** Writes the pending log lines now. */
export function flushLog(): void {
  if (pending.length > 0) process.stderr.write(takePending());
}

process.on("exit", () => {
  if (pending.length === 0) return;
  try {
    writeSync(2, takePending());
  } catch {}
});

const klogReporter: ConsolaReporter = {
  log(obj) {
    pending.push(obj);
    if (flushScheduled) return;
    flushScheduled = true;
    setImmediate(() => {
      flushScheduled = false;
      flushLog();
    });
  },
};

// throttle 0: every line is written as it comes, as klog does. consola's default folds repeats of a line
// within a second once they pass five (its count carries over between runs of repeats) and holds them back
// until another line comes or the second is over.
export const log = createConsola({ level: 3, reporters: [klogReporter], throttle: 0 });

/** Sets verbosity from the kubelet's -v level: 0–1 info, 2–3 debug, ≥4 trace. */
export function setVerbosity(v: number): void {
  log.level = v >= 4 ? 5 : v >= 2 ? 4 : 3;
}

/** Formats a structured key=value tail; values with spaces are quoted. */
export function kv(fields: Record<string, unknown>): string {
  return Object.entries(fields)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => {
      const s = typeof v === "string" ? v : JSON.stringify(v);
      return `${k}=${/[\s"=]/.test(s) ? JSON.stringify(s) : s}`;
    })
    .join(" ");
}
