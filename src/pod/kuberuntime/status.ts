// CRI statuses → the runtime-neutral statuses of src/pod/runtime.ts (upstream toKubeContainerStatus).
import type { ContainerState as CriContainerState, ContainerStatus, PodSandbox, PodSandboxStatus } from "../../cri/types.ts";
import type { ContainerState, RuntimeContainerStatus, RuntimeSandboxStatus } from "../runtime.ts";
import { CONTAINER_HASH_LABEL, containerNameOf } from "./labels.ts";

export function toContainerState(s: CriContainerState): ContainerState {
  switch (s) {
    case "CONTAINER_CREATED":
      return "created";
    case "CONTAINER_RUNNING":
      return "running";
    case "CONTAINER_EXITED":
      return "exited";
    default:
      return "unknown";
  }
}

/** CRI timestamps are nanoseconds since the epoch; 0 stays 0 ("not applicable"). */
export const nsToMs = (ns: number): number => (ns > 0 ? Math.floor(ns / 1e6) : 0);

export function toRuntimeContainerStatus(s: ContainerStatus): RuntimeContainerStatus {
  const state = toContainerState(s.state);
  const out: RuntimeContainerStatus = {
    id: s.id,
    name: containerNameOf(s),
    image: s.image?.userSpecifiedImage || s.image?.image || "",
    imageRef: s.imageRef || undefined,
    state,
    createdAtMs: nsToMs(s.createdAt),
    startedAtMs: nsToMs(s.startedAt),
    finishedAtMs: nsToMs(s.finishedAt),
    attempt: s.metadata?.attempt ?? 0,
    hash: s.annotations[CONTAINER_HASH_LABEL] ?? s.labels[CONTAINER_HASH_LABEL],
  };
  if (state === "exited") {
    out.exitCode = s.exitCode;
    // containerd reports OOMKilled / Error / Completed; fill in for runtimes that leave it empty.
    out.reason = s.reason || (s.exitCode === 0 ? "Completed" : "Error");
  } else if (s.reason) {
    out.reason = s.reason;
  }
  if (s.message) out.message = s.message;
  return out;
}

export function toRuntimeSandboxStatus(s: PodSandbox | PodSandboxStatus): RuntimeSandboxStatus {
  const out: RuntimeSandboxStatus = {
    id: s.id,
    attempt: s.metadata?.attempt ?? 0,
    state: s.state === "SANDBOX_READY" ? "ready" : "notready",
    createdAtMs: nsToMs(s.createdAt),
  };
  const ip = "network" in s ? s.network?.ip : undefined;
  if (ip) out.ip = ip;
  return out;
}
