// When the last graceful shutdown started and ended, kept across the reboot it precedes (upstream
// nodeshutdown localStorageStateFile "graceful_node_shutdown_state" in the root dir, and the gauges
// kubelet_graceful_shutdown_start_time_seconds / _end_time_seconds restored from it at start). An end
// time of 0 after a reboot says the last shutdown did not finish killing pods in time.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { writeFileAtomicSync } from "../../atomic-file.ts";
import { kv, log } from "../../log.ts";
import type { Registry } from "../../server/metrics.ts";

export const LOCAL_STORAGE_STATE_FILE = "graceful_node_shutdown_state";

/** Upstream's JSON: Go time.Time as RFC 3339; a zero time is "0001-01-01T00:00:00Z". */
const stateFile = z.object({ startTime: z.string().optional(), endTime: z.string().optional() });

const GO_ZERO_TIME = "0001-01-01T00:00:00Z";
const toSeconds = (t: string | undefined) => {
  if (!t || t.startsWith("0001-01-01")) return 0;
  const ms = Date.parse(t);
  return Number.isFinite(ms) ? ms / 1000 : 0;
};

export interface ShutdownRecorder {
  start(nowMs: number): void;
  end(nowMs: number): void;
}

/** Gauges from the state file of the previous boot, and a recorder that keeps both up to date. */
export function createShutdownRecorder(rootDir: string, metrics?: Registry): ShutdownRecorder {
  const path = join(rootDir, LOCAL_STORAGE_STATE_FILE);
  const startGauge = metrics?.gauge({
    name: "kubelet_graceful_shutdown_start_time_seconds",
    help: "Last graceful shutdown start time since unix epoch in seconds",
  });
  const endGauge = metrics?.gauge({ name: "kubelet_graceful_shutdown_end_time_seconds", help: "Last graceful shutdown end time since unix epoch in seconds" });
  let startTime = GO_ZERO_TIME;
  try {
    const parsed = stateFile.safeParse(JSON.parse(readFileSync(path, "utf8")));
    if (!parsed.success) log.warn(`ignoring the graceful shutdown state file ${kv({ path, error: parsed.error.issues[0]?.message })}`);
    else {
      startGauge?.set(toSeconds(parsed.data.startTime));
      endGauge?.set(toSeconds(parsed.data.endTime));
    }
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") log.warn(`cannot read the graceful shutdown state file ${kv({ path, error: (e as Error).message })}`);
  }
  const store = (state: { startTime: string; endTime: string }) => {
    try {
      writeFileAtomicSync(path, JSON.stringify(state));
    } catch (e) {
      log.error(`Failed to store graceful shutdown state ${kv({ path, error: (e as Error).message })}`);
    }
  };
  return {
    start(nowMs) {
      startTime = new Date(nowMs).toISOString();
      store({ startTime, endTime: GO_ZERO_TIME });
      startGauge?.set(nowMs / 1000);
      endGauge?.set(0);
    },
    end(nowMs) {
      store({ startTime, endTime: new Date(nowMs).toISOString() });
      endGauge?.set(nowMs / 1000);
    },
  };
}
