// Carries out an in-place resize (upstream kuberuntime_manager.go doPodResizeAction,
// validateMemoryResizeAction, updatePodContainerResources; kuberuntime_container.go
// updateContainerResources): memory first, then cpu; for each, a growing pod cgroup is written before
// the containers and a shrinking one after them (limits grown before requests, requests shrunk before
// limits), and a memory limit below what the pod or a container uses now is refused before anything
// is written. Each container accepted by the runtime is recorded as actuated.
import { formatQuantity, quantityFromNumber } from "../../config/quantity.ts";
import { kv, log } from "../../log.ts";
import { podResourceConfig, type ResourceConfig } from "../cgroups-config.ts";
import { podKeyOf } from "../pod-like.ts";
import type { PodCgroupResizer } from "../runtime.ts";
import type { ContainerRequirements, KubeRuntimeContext } from "./context.ts";
import type { ContainerToUpdate, PodResizeActions, ResizeResources } from "./resize-actions.ts";
import { containerResources } from "./resources.ts";
import type { KubePod } from "./types.ts";

type Resource = "memory" | "cpu";

/** A container's resources as upstream writes them back (NewMilliQuantity DecimalSI, NewQuantity BinarySI). */
export function requirementsOf(r: ResizeResources): ContainerRequirements {
  const cpu = (milli: number) => formatQuantity({ nanos: BigInt(milli) * 1_000_000n, format: "DecimalSI" });
  const mem = (bytes: number) => formatQuantity(quantityFromNumber(bytes, "BinarySI"));
  return {
    requests: { cpu: cpu(r.cpuRequestMilli), memory: mem(r.memoryRequestBytes) },
    limits: { cpu: cpu(r.cpuLimitMilli), memory: mem(r.memoryLimitBytes) },
  };
}

/** The values one step writes: the resource's new limit or request, mixed with the container's current other resource. */
export function stepResources(u: ContainerToUpdate, resource: Resource): ResizeResources {
  return resource === "memory"
    ? { ...u.current, memoryLimitBytes: u.desired.memoryLimitBytes, memoryRequestBytes: u.desired.memoryRequestBytes }
    : { ...u.current, cpuLimitMilli: u.desired.cpuLimitMilli, cpuRequestMilli: u.desired.cpuRequestMilli };
}

/** The memory limits that go down (pod, then containers by name) → what each is set to. */
export function decreasingMemoryLimits(
  current: ResourceConfig,
  desired: ResourceConfig,
  updates: ContainerToUpdate[],
): { pod?: number; containers: Map<string, { id: string; limit: number }> } {
  const out: { pod?: number; containers: Map<string, { id: string; limit: number }> } = { containers: new Map() };
  if (desired.memoryLimitBytes !== undefined && (current.memoryLimitBytes === undefined || desired.memoryLimitBytes < current.memoryLimitBytes))
    out.pod = desired.memoryLimitBytes;
  for (const u of updates) {
    const want = u.desired.memoryLimitBytes;
    if (want !== 0 && (u.current.memoryLimitBytes === 0 || want < u.current.memoryLimitBytes)) out.containers.set(u.name, { id: u.id, limit: want });
  }
  return out;
}

/** upstream validateMemoryResizeAction: the error when a memory limit would go below current usage. */
async function validateMemoryResize(
  ctx: KubeRuntimeContext,
  pod: KubePod,
  podCgroup: PodCgroupResizer | undefined,
  current: ResourceConfig,
  desired: ResourceConfig,
  updates: ContainerToUpdate[],
): Promise<string | undefined> {
  const down = decreasingMemoryLimits(current, desired, updates);
  const errs: string[] = [];
  if (down.pod !== undefined && podCgroup) {
    const usage = await podCgroup.memoryUsageBytes(pod);
    if (usage === undefined) errs.push("missing pod memory usage");
    else if (usage >= down.pod) errs.push(`attempting to set pod memory limit (${down.pod}) below current usage (${usage})`);
  }
  for (const [name, { id, limit }] of down.containers) {
    const usage = (await ctx.cri.containerStats(id).catch(() => null))?.memory?.usageBytes?.value;
    if (usage === undefined) errs.push(`missing container "${name}" memory usage`);
    else if (Number(usage) >= limit) errs.push(`attempting to set container "${name}" memory limit (${limit}) below current usage (${usage})`);
  }
  if (errs.length === 0) return undefined;
  // Go's utilerrors aggregate: one error as itself, more in brackets.
  return `cannot decrease memory limits: ${errs.length === 1 ? errs[0] : `[${errs.join(", ")}]`}`;
}

/** upstream updatePodContainerResources: each container in order, its new values recorded once the runtime took them. */
async function updateContainers(ctx: KubeRuntimeContext, pod: KubePod, resource: Resource, updates: ContainerToUpdate[]): Promise<void> {
  const uid = pod.metadata.uid ?? "";
  for (const u of updates) {
    const spec = [...pod.spec.containers, ...(pod.spec.initContainers ?? [])].find((c) => c.name === u.name);
    if (!spec) continue;
    const applied = stepResources(u, resource);
    const resources = requirementsOf(applied);
    const linux = containerResources(pod, { ...spec, resources }, ctx.memoryCapacityBytes, ctx.cgroupHost);
    await ctx.cri.updateContainerResources(u.id, linux);
    Object.assign(u.current, applied);
    ctx.opts.actuated?.set(uid, u.name, resources);
  }
}

/** The pod cgroup values one step writes (memory requests are not written to cgroups). */
function podCgroupStep(desired: ResourceConfig, resource: Resource, limit: boolean): ResourceConfig | undefined {
  if (resource === "memory") return limit ? { memoryLimitBytes: desired.memoryLimitBytes } : undefined;
  if (!limit) return { cpuShares: desired.cpuShares };
  return desired.cpuQuotaUs === undefined ? undefined : { cpuQuotaUs: desired.cpuQuotaUs, cpuPeriodUs: desired.cpuPeriodUs };
}

interface ResizeStep {
  ctx: KubeRuntimeContext;
  pod: KubePod;
  podCgroup?: PodCgroupResizer;
  desired: ResourceConfig;
  updates: ContainerToUpdate[];
}

/** upstream resizeContainers: grow the pod cgroup (limit, then request), the containers, shrink it (request, then limit). */
async function resizeResource(s: ResizeStep, resource: Resource, lim: [number, number], req: [number, number]): Promise<void> {
  const setPod = async (limit: boolean) => {
    const cfg = podCgroupStep(s.desired, resource, limit);
    if (cfg && s.podCgroup) await s.podCgroup.set(s.pod, cfg);
  };
  if (lim[1] > lim[0]) await setPod(true);
  if (req[1] > req[0]) await setPod(false);
  if (s.updates.length > 0) await updateContainers(s.ctx, s.pod, resource, s.updates);
  if (req[1] < req[0]) await setPod(false);
  if (lim[1] < lim[0]) await setPod(true);
}

/** upstream doPodResizeAction: undefined when done, else the error (the next sync retries what is left). */
export async function doPodResizeAction(
  ctx: KubeRuntimeContext,
  pod: KubePod,
  actions: PodResizeActions,
  podCgroup?: PodCgroupResizer,
): Promise<string | undefined> {
  const desired = podResourceConfig(pod);
  const current: ResourceConfig = podCgroup?.config(pod) ?? {};
  const step = (updates: ContainerToUpdate[]): ResizeStep => ({ ctx, pod, podCgroup, desired, updates });
  try {
    if (actions.update.memory.length > 0 || actions.updatePodResources) {
      const invalid = await validateMemoryResize(ctx, pod, podCgroup, current, desired, actions.update.memory);
      if (invalid) return invalid;
      const have = current.memoryLimitBytes ?? 0;
      const want = desired.memoryLimitBytes ?? have;
      await resizeResource(step(actions.update.memory), "memory", [have, want], [0, 0]);
    }
    if (actions.update.cpu.length > 0 || actions.updatePodResources) {
      const haveQuota = current.cpuQuotaUs ?? -1;
      const wantQuota = desired.cpuQuotaUs ?? haveQuota;
      await resizeResource(step(actions.update.cpu), "cpu", [haveQuota, wantQuota], [current.cpuShares ?? 0, desired.cpuShares ?? 0]);
    }
  } catch (e) {
    const message = (e as Error).message;
    log.warn(`pod resize failed ${kv({ pod: podKeyOf(pod.metadata.namespace ?? "", pod.metadata.name), error: message })}`);
    return message;
  }
  return undefined;
}
