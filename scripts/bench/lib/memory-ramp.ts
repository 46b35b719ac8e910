// The memory ramp of reaction.ts and vs-kubelet.ts figure 5, and how both measure it, whatever the agent:
// a BestEffort pod running memhog (600 MiB/s up to 850 MiB, then held) on a node whose kubepods is
// limited to 1 GiB allocatable, with a hard threshold of 300 MiB available; the crossing from a memcg
// threshold eventfd the bench arms on kubepods; "victim got SIGTERM" from memhog's SIGTERM handler line
// in the container's CRI log; the kernel OOM kills from kubepods' memory.oom_control (see reaction.ts's
// header for each measurement's reasoning).
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { preciseNow } from "../../../src/clock.ts";
import { armCgroupThreshold, type NotifierHub } from "../../../src/kernel/index.ts";
import { POD_NAME_LABEL } from "../../../src/pod/kuberuntime/labels.ts";
import type { CriClient } from "../../../src/cri/client.ts";
import { until } from "../../../test/support/wait.ts";
import { flatKeyed, MIB, readCgroupFile } from "../../chaos/lib.ts";

export const ALLOCATABLE = 1024 * MIB;
export const THRESHOLD = 300 * MIB;
export const RAMP = { totalMiB: 850, mibPerSec: 600 };

/** The memhog SIGTERM handler's line in a CRI log ("<RFC3339Nano> stdout F sigterm <ns>") → ms, or undefined. */
export function sigtermFromCriLog(text: string): number | undefined {
  const m = /^\S+ stdout F sigterm (\d+)$/m.exec(text);
  // µs kept exactly: the ns value (~1.8e18) is above 2^53.
  return m ? Number(BigInt(m[1]!) / 1000n) / 1000 : undefined;
}

export interface Received {
  /** When the victim's SIGTERM handler ran (its "sigterm <ns>" CRI log line), ms wall clock. */
  receivedAt?: number;
  /** Why there is none for a victim that was stopped (no sigterm line, and the exit code). */
  noSigterm?: string;
}

/** The pod's container "main" log, <podLogsDir>/<namespace>_<pod>_<uid>/main/0.log, found without the UID. */
function criLogPath(podLogsDir: string, namespace: string, pod: string): string | undefined {
  const dir = existsSync(podLogsDir) ? readdirSync(podLogsDir).find((d) => d.startsWith(`${namespace}_${pod}_`)) : undefined;
  return dir === undefined ? undefined : join(podLogsDir, dir, "main", "0.log");
}

/**
 * When the victim (pod `pod`'s only container, "main") got SIGTERM: its sigterm line in the CRI log.
 * Polled until the line is there or the container has exited with none: its stdout is closed then,
 * and the 500 ms after that leave containerd time to copy out what was left in the pipe.
 */
export async function victimReceived(cri: CriClient, podLogsDir: string, pod: string, timeoutMs = 10_000, namespace = "default"): Promise<Received> {
  let exitedAt: number | undefined;
  return await until(
    `${pod}'s sigterm line under ${podLogsDir}`,
    async (): Promise<Received | undefined> => {
      const log = criLogPath(podLogsDir, namespace, pod);
      const t = log && existsSync(log) ? sigtermFromCriLog(readFileSync(log, "utf8")) : undefined;
      if (t !== undefined) return { receivedAt: t };
      const [c] = await cri.listContainers({ labelSelector: { [POD_NAME_LABEL]: pod } });
      const st = c ? (await cri.containerStatus(c.id)).status : null;
      if (st?.state !== "CONTAINER_EXITED") return undefined;
      exitedAt ??= preciseNow();
      if (preciseNow() - exitedAt < 500) return undefined;
      const how = st.exitCode === 137 ? "SIGKILL" : st.exitCode > 128 ? `signal ${st.exitCode - 128}` : "no signal";
      return { noSigterm: `victim exited ${st.exitCode} (${how}${st.reason ? `, ${st.reason}` : ""}) with no sigterm line` };
    },
    timeoutMs,
    { intervalMs: 20 },
  );
}

/** kubepods' memory.usage_in_bytes at which it crosses the threshold: allocatable − threshold + inactive_file (the agents' own formula). */
export function crossingUsage(kubepods: string): number {
  const inactive = flatKeyed(readCgroupFile(kubepods, "memory.stat")).total_inactive_file ?? 0;
  return ALLOCATABLE - THRESHOLD + inactive;
}

export interface ThresholdObserver {
  /** The first up-crossing, ms wall clock (the notifier worker's stamp). */
  crossed(): number | undefined;
  /** The first down-crossing after `after`. */
  freed(after: number): number | undefined;
  stop(): void;
}

/** The memcg threshold on `kubepods` at `usageBytes`, both directions, for one run. */
export async function observeThreshold(hub: NotifierHub, kubepods: string, usageBytes: number): Promise<ThresholdObserver> {
  const events: { wokeAtMs: number; usage: number }[] = [];
  const n = await armCgroupThreshold(hub, {
    cgroupPath: kubepods,
    thresholdBytes: usageBytes,
    onEvent: (ev) => events.push({ wokeAtMs: ev.wokeAtMs, usage: ev.usageBytes ?? 0 }),
  });
  return {
    crossed: () => events.find((e) => e.usage >= usageBytes)?.wokeAtMs,
    freed: (after: number) => events.find((e) => e.wokeAtMs > after && e.usage < usageBytes)?.wokeAtMs,
    stop: () => n.stop(),
  };
}
