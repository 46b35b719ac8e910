// Container lifecycle hooks inside kuberuntime (upstream kuberuntime_container.go startContainer step
// 4, killContainer, executePreStopHook, restoreSpecsFromContainerLabels): postStart after
// StartContainer (a failure kills the container), preStop before StopContainer inside the grace period,
// sidecars' turn in the termination ordering, and the specs of containers whose pod is gone restored
// from their annotations. Built by the runtime manager with the few runtime calls it needs.
import type { Clock } from "../../clock.ts";
import type { CriClient } from "../../cri/client.ts";
import { kv, log } from "../../log.ts";
import { defaultHostIP } from "../lifecycle-types.ts";
import { formatPod, runLifecycleHandler, type HookTarget } from "../lifecycle-hooks.ts";
import { podKeyOf, podUid } from "../pod-like.ts";
import type { ExecResult } from "../runtime.ts";
import type { PodRef } from "./config.ts";
import { CONTAINER_PRESTOP_HANDLER_LABEL, POD_TERMINATION_GRACE_PERIOD_LABEL, POD_UID_LABEL } from "./labels.ts";
import { MINIMUM_GRACE_PERIOD_SECONDS, type TerminationOrdering, containerSpec, runPreStopWithin, terminationGracePeriod } from "./termination.ts";
import type { KubeContainer, KubePod } from "./types.ts";

export interface ContainerHooksDeps {
  cri: Pick<CriClient, "listPodSandbox" | "podSandboxStatus">;
  clock: Pick<Clock, "now" | "setTimeout" | "clearTimeout">;
  /** Node IP for hostNetwork pods' httpGet hooks (default: the first non-internal IPv4). */
  hostIP?: string;
  fetch?: typeof fetch;
  /** CRI ExecSync in seconds (0 = no hook timeout). */
  execSync(containerId: string, cmd: string[], timeoutSeconds: number): Promise<ExecResult>;
  /** The runtime's StopContainer with its log line and direct signal. */
  /** FailedPreStopHook / FailedPostStartHook events on the container. */
  hookFailed?: (pod: KubePod, container: string, reason: "FailedPreStopHook" | "FailedPostStartHook", message: string) => void;
  stopContainer(id: string, name: string, ref: PodRef, graceSeconds: number, message: string, pod?: KubePod): Promise<void>;
}

export function createContainerHooks(deps: ContainerHooksDeps) {
  const { cri, clock, hostIP: nodeIP } = deps;
  const opts = { hostIP: nodeIP, fetch: deps.fetch };
  const execSyncRaw = deps.execSync;
  const stopContainer = deps.stopContainer;

  /** The pod's IP for httpGet hooks: the node's for hostNetwork, else the ready sandbox's. */
  async function podIP(pod: KubePod, sandboxId: string | undefined): Promise<string | undefined> {
    if (pod.spec.hostNetwork) return opts.hostIP ?? defaultHostIP() ?? "127.0.0.1";
    const id = sandboxId ?? (await cri.listPodSandbox({ labelSelector: { [POD_UID_LABEL]: podUid(pod) }, state: { state: "SANDBOX_READY" } }))[0]?.id;
    if (!id) return undefined;
    const st = await cri.podSandboxStatus(id).catch(() => undefined);
    return st?.status?.network?.ip || undefined;
  }

  function hookTarget(_pod: KubePod, ref: PodRef, container: KubeContainer, id: string, ip: string | undefined): HookTarget {
    return { pod: ref, container, containerId: id, podIP: ip };
  }

  /**
   * Upstream killContainer: the preStop hook first (its duration taken from the grace period), then,
   * for sidecars, the wait for their turn; StopContainer gets what is left, at least 2 s. A container
   * without either goes straight to StopContainer with `graceSeconds` — the eviction fast path.
   */
  async function killContainer(
    pod: KubePod | undefined,
    ref: PodRef,
    id: string,
    name: string,
    graceSeconds: number,
    message: string,
    o: { ordering?: TerminationOrdering; sandboxId?: string; floor?: boolean } = {},
  ): Promise<void> {
    const { ordering, sandboxId } = o;
    const spec = containerSpec(pod, name);
    const preStop = spec?.lifecycle?.preStop;
    let grace = graceSeconds;
    if (pod && spec && preStop && grace > 0) {
      const target = hookTarget(pod, ref, spec, id, preStop.httpGet && !preStop.httpGet.host ? await podIP(pod, sandboxId) : undefined);
      log.info(`running preStop hook ${kv({ pod: podKeyOf(ref.namespace, ref.name), container: name, id: id.slice(0, 13), gracePeriod: grace })}`);
      const r = await runPreStopWithin(grace, clock, async (signal) => {
        const err = await runLifecycleHandler(preStop, target, { execSync: execSyncRaw, fetch: opts.fetch }, signal);
        // A hook cut short by the grace period is logged below, not a failed hook (upstream leaves it running).
        if (err && !signal.aborted) {
          log.warn(`preStop hook failed ${kv({ pod: podKeyOf(ref.namespace, ref.name), container: name, event: "FailedPreStopHook", message: err })}`);
          deps.hookFailed?.(pod, name, "FailedPreStopHook", "PreStopHook failed");
        }
      });
      if (!r.completed)
        log.info(`preStop hook not completed in grace period ${kv({ pod: podKeyOf(ref.namespace, ref.name), container: name, gracePeriod: grace })}`);
      grace = r.remainingSeconds;
    }
    const waits = ordering && grace > 0;
    if (waits) grace -= await ordering.waitForTurn(name, grace);
    if (preStop || waits || o.floor) grace = Math.max(grace, MINIMUM_GRACE_PERIOD_SECONDS);
    try {
      await stopContainer(id, name, ref, grace, message, pod);
    } finally {
      ordering?.containerTerminated(name);
    }
  }

  /** upstream restoreSpecsFromContainerLabels: the grace period and preStop hooks the containers were created with. */
  function restoreSpecs(ref: PodRef, containers: Awaited<ReturnType<CriClient["listContainers"]>>, stub: KubePod | undefined): KubePod {
    const grace = Number(containers[0]?.annotations?.[POD_TERMINATION_GRACE_PERIOD_LABEL]);
    const restored: KubeContainer[] = containers.map((c) => {
      let preStop: unknown;
      try {
        const raw = c.annotations?.[CONTAINER_PRESTOP_HANDLER_LABEL];
        preStop = raw ? JSON.parse(raw) : undefined;
      } catch {
        preStop = undefined; // a damaged annotation: stop without the hook
      }
      return { name: c.metadata?.name ?? "", ...(preStop ? { lifecycle: { preStop: preStop as NonNullable<KubeContainer["lifecycle"]>["preStop"] } } : {}) };
    });
    return {
      metadata: stub?.metadata ?? { name: ref.name, namespace: ref.namespace, uid: ref.uid },
      spec: { ...(stub?.spec ?? {}), terminationGracePeriodSeconds: Number.isFinite(grace) ? grace : undefined, containers: restored },
    } as KubePod;
  }

  /**
   * The postStart handler, bounded by the pod's termination grace period: upstream runs it on the
   * pod sync's context, which a kill cancels; bunlet has no such context, so a hook that never returns
   * (an exec that hangs, an HTTP server that never answers) is a failed hook once the grace period —
   * what a kill would allow it — has passed, and the container is killed as after any failed postStart.
   */
  async function runPostStartHandler(
    pod: KubePod,
    target: HookTarget,
    postStart: NonNullable<NonNullable<KubeContainer["lifecycle"]>["postStart"]>,
  ): Promise<string | undefined> {
    const deadlineSeconds = Math.max(pod.spec.terminationGracePeriodSeconds ?? 30, MINIMUM_GRACE_PERIOD_SECONDS);
    let err: string | undefined;
    const execSync = (containerId: string, cmd: string[]) => execSyncRaw(containerId, cmd, deadlineSeconds);
    const r = await runPreStopWithin(deadlineSeconds, clock, async (signal) => {
      err = await runLifecycleHandler(postStart, target, { execSync, fetch: opts.fetch }, signal);
    });
    if (r.completed) return err;
    return `PostStartHook for Container "${target.container.name}" in Pod "${formatPod(target.pod)}" did not complete within the pod's termination grace period (${deadlineSeconds}s)`;
  }

  /** Upstream startContainer step 4: a failed postStart hook kills the container (reason FailedPostStartHook). */
  async function runPostStart(pod: KubePod, ref: PodRef, container: KubeContainer, id: string, sandboxId: string): Promise<string | undefined> {
    const postStart = container.lifecycle?.postStart;
    if (!postStart) return undefined;
    const ip = postStart.httpGet && !postStart.httpGet.host ? await podIP(pod, sandboxId) : undefined;
    const err = await runPostStartHandler(pod, hookTarget(pod, ref, container, id, ip), postStart);
    if (!err) return undefined;
    log.warn(
      `postStart hook failed, killing container ${kv({ pod: podKeyOf(ref.namespace, ref.name), container: container.name, id: id.slice(0, 13), event: "FailedPostStartHook", message: err })}`,
    );
    deps.hookFailed?.(pod, container.name, "FailedPostStartHook", err);
    const grace = terminationGracePeriod(pod, container, "postStart");
    await killContainer(pod, ref, id, container.name, grace, "FailedPostStartHook", { sandboxId, floor: true }).catch((e) =>
      log.warn(
        `killing container after failed postStart hook failed ${kv({ pod: podKeyOf(ref.namespace, ref.name), container: container.name, error: (e as Error).message })}`,
      ),
    );
    return err;
  }

  return { podIP, killContainer, restoreSpecs, runPostStart };
}
