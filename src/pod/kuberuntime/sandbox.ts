// Pod sandboxes (upstream kuberuntime_sandbox.go createPodSandbox and the sandbox side of
// getPodStatus; the config itself is generatePodSandboxConfig in config.ts): plain functions over the
// shared KubeRuntimeContext (context.ts), called by syncPod and getPodStatus in manager.ts.
import { mkdirSync } from "node:fs";
import type { PodSandboxConfig, UserNamespace } from "../../cri/types.ts";
import { podRef, reasons } from "../../events/index.ts";
import { kv, log } from "../../log.ts";
import { defaultHostIP } from "../lifecycle-types.ts";
import type { RuntimePodStatus, SyncPodResult } from "../runtime.ts";
import type { PodActions } from "./compute-actions.ts";
import { type ConfigInputs, type PodRef, generatePodSandboxConfig, podLogsDirectory } from "./config.ts";
import { PRIORITY_SANDBOX, type HeldSlot, type KubeRuntimeContext } from "./context.ts";
import { sandboxDnsConfig } from "./pod-network.ts";
import { toRuntimeSandboxStatus } from "./status.ts";
import type { KubePod } from "./types.ts";
import { podKeyOf } from "../pod-like.ts";

/** The pod's sandboxes, newest first; only the newest ready one is asked for its status (its network). */
export async function podSandboxStatuses(ctx: KubeRuntimeContext, selector: { labelSelector: Record<string, string> }): Promise<RuntimePodStatus["sandboxes"]> {
  const sandboxes = (await ctx.cri.listPodSandbox(selector)).sort((a, b) => b.createdAt - a.createdAt);
  const statuses = [];
  for (const [i, s] of sandboxes.entries()) {
    // Only the newest sandbox's network matters (pod IP); others are history.
    if (i === 0 && s.state === "SANDBOX_READY") {
      const st = await ctx.cri.podSandboxStatus(s.id).catch(() => undefined);
      statuses.push(toRuntimeSandboxStatus(st?.status ?? s));
    } else {
      statuses.push(toRuntimeSandboxStatus(s));
    }
  }
  return statuses;
}

/** The sandbox config of this sync, its DNS config (inputs.dnsConfig) resolved first; throws what generation met. */
export function sandboxConfigFor(ctx: KubeRuntimeContext, pod: KubePod, ref: PodRef, actions: PodActions, inputs: ConfigInputs): PodSandboxConfig {
  const nodeIP = ctx.opts.hostIP ?? defaultHostIP();
  inputs.dnsConfig = sandboxDnsConfig(pod, ctx.dns, nodeIP ? [nodeIP] : [], actions.createSandbox, (reason, message) =>
    ctx.opts.onPodWarning?.(pod, reason, message),
  );
  return generatePodSandboxConfig(pod, ref, actions.attempt, inputs);
}

/**
 * upstream NamespacesForPod's user namespace: the runtime handler (only a pod asking for its own user
 * namespace needs it), then the user namespace manager; undefined without one.
 */
export async function usernsOptionsFor(ctx: KubeRuntimeContext, pod: KubePod): Promise<UserNamespace | undefined> {
  const get = ctx.opts.userNamespaceMappings;
  if (!get) return undefined;
  const handler = pod.spec.hostUsers === false ? ((await ctx.opts.apiObjects?.runtimeHandler?.(pod)) ?? "") : "";
  return get(pod, handler);
}

/**
 * The sandbox config could not be generated (a user namespace the runtime cannot give, say): the sync
 * fails with CreatePodSandboxError and, when a sandbox was to be created, upstream createPodSandbox's
 * FailedCreatePodSandBox Warning event.
 */
export function sandboxConfigFailed(ctx: KubeRuntimeContext, pod: KubePod, ref: PodRef, actions: PodActions, result: SyncPodResult, e: Error): void {
  const message = `Failed to generate sandbox config for pod "${ref.name}_${ref.namespace}(${ref.uid})": ${e.message}`;
  result.errors.push({ container: "", reason: "CreatePodSandboxError", message });
  if (!actions.createSandbox) return;
  log.error(`CreatePodSandbox for pod failed ${kv({ pod: podKeyOf(ref.namespace, ref.name), error: e.message })}`);
  ctx.events.event(podRef(pod), "Warning", reasons.FailedCreatePodSandBox, `Failed to create pod sandbox: ${e.message}`);
}

/** One createPodSandbox step of a pod sync. */
export interface CreateSandboxRequest {
  pod: KubePod;
  ref: PodRef;
  actions: PodActions;
  sandboxConfig: PodSandboxConfig;
  cgroupParent: string | undefined;
  /** Receives the start slot the pod keeps for its first container's create and start. */
  held: HeldSlot;
  result: SyncPodResult;
}

/**
 * Upstream createPodSandbox: the pod's log directory, then RunPodSandbox in a start slot the pod
 * keeps (held). Returns the new sandbox's ID, or undefined with the failure in result.errors.
 */
export async function createPodSandbox(ctx: KubeRuntimeContext, req: CreateSandboxRequest): Promise<string | undefined> {
  const { pod, ref, actions, held, result } = req;
  if (actions.sandboxId) ctx.events.event(podRef(pod), "Normal", reasons.SandboxChanged, "Pod sandbox changed, it will be killed and re-created.");
  try {
    mkdirSync(podLogsDirectory(ctx.podLogsDir, ref), { recursive: true });
    // The pod keeps this slot for its first container's create and start (held), as a lane of
    // bare calls would: handed to the next sandbox instead, the pod's own create waited behind
    // the sandboxes started meanwhile (first Running 2.5 s with 4 slots under load).
    const handler = (await ctx.opts.apiObjects?.runtimeHandler?.(pod)) ?? "";
    if (handler) log.info(`Running pod with runtime handler ${kv({ pod: podKeyOf(ref.namespace, ref.name), runtimeHandler: handler })}`);
    held.release = await ctx.startSlots.acquire(PRIORITY_SANDBOX);
    const sandboxId = await ctx.cri.runPodSandbox(req.sandboxConfig, handler);
    log.info(
      `created pod sandbox ${kv({ pod: podKeyOf(ref.namespace, ref.name), id: sandboxId.slice(0, 13), attempt: actions.attempt, cgroupParent: req.cgroupParent, runtimeHandler: handler || undefined })}`,
    );
    return sandboxId;
  } catch (e) {
    held.release?.();
    result.errors.push({ container: "", reason: "CreatePodSandboxError", message: `Failed to create pod sandbox: ${(e as Error).message}` });
    ctx.events.event(podRef(pod), "Warning", reasons.FailedCreatePodSandBox, `Failed to create pod sandbox: ${(e as Error).message}`);
    return undefined;
  }
}
