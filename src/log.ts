// The one logger. consola with a key=value tail helper so every decision is one grep-able line:
//   log.info(`evicting ${kv({ pod: "default/hog", signal: "memory.available" })}`)
import { createConsola } from "consola";

export const log = createConsola({ level: 3 });

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
