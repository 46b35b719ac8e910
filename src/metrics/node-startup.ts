// kubelet_node_startup_* (upstream pkg/kubelet/util/node_startup_latency_tracker.go): gauges set once,
// on the first registration and the first Ready, from the boot time, the kubelet's start, the first
// registration attempt, the registration and the first Ready report:
//   pre_kubelet        = kubelet start − boot           (set at registration, as upstream)
//   pre_registration   = first attempt − kubelet start
//   registration       = registered − first attempt
//   post_registration  = first Ready − registered
//   duration           = first Ready − boot
import { readFileSync } from "node:fs";
import type { Registry } from "../server/metrics.ts";

export interface NodeStartupTracker {
  attemptRegisterNode(): void;
  registeredNode(): void;
  nodeReady(): void;
}

/** Pure: the btime line of /proc/stat → boot time (epoch ms), or undefined. */
export function parseBootTimeMs(procStat: string): number | undefined {
  const m = /^btime (\d+)$/m.exec(procStat);
  return m ? Number(m[1]) * 1000 : undefined;
}

export function readBootTimeMs(): number | undefined {
  try {
    return parseBootTimeMs(readFileSync("/proc/stat", "utf8"));
  } catch {
    return undefined;
  }
}

export function nodeStartupMetrics(registry: Registry, t: { nowMs(): number; kubeletStartMs: number; bootTimeMs?: number }): NodeStartupTracker {
  const g = (name: string, help: string) => registry.gauge({ name: `kubelet_node_startup_${name}`, help });
  const preKubelet = g("pre_kubelet_duration_seconds", "Duration in seconds of node startup before kubelet starts.");
  const preRegistration = g("pre_registration_duration_seconds", "Duration in seconds of node startup before registration.");
  const registration = g("registration_duration_seconds", "Duration in seconds of node startup during registration.");
  const postRegistration = g("post_registration_duration_seconds", "Duration in seconds of node startup after registration.");
  const total = g("duration_seconds", "Duration in seconds of node startup in total.");
  let attemptMs: number | undefined;
  let registeredMs: number | undefined;
  let readyMs: number | undefined;
  const s = (ms: number) => ms / 1000;
  return {
    attemptRegisterNode() {
      attemptMs ??= t.nowMs();
    },
    registeredNode() {
      if (attemptMs === undefined || registeredMs !== undefined) return;
      registeredMs = t.nowMs();
      if (t.bootTimeMs !== undefined) preKubelet.set(s(t.kubeletStartMs - t.bootTimeMs));
      preRegistration.set(s(attemptMs - t.kubeletStartMs));
      registration.set(s(registeredMs - attemptMs));
    },
    nodeReady() {
      if (registeredMs === undefined || readyMs !== undefined) return;
      readyMs = t.nowMs();
      postRegistration.set(s(readyMs - registeredMs));
      if (t.bootTimeMs !== undefined) total.set(s(readyMs - t.bootTimeMs));
    },
  };
}
