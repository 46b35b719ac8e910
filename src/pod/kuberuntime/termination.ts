// How a container is stopped (upstream kuberuntime_container.go killContainer, executePreStopHook,
// setTerminationGracePeriod; terminationordering.go): the grace period is the pod's (or the
// liveness/startup probe's own terminationGracePeriodSeconds when that probe killed it, or the
// termination's override); a preStop hook runs first and the seconds it took (truncated) are taken
// from the grace period; sidecars (restartable init containers) then wait for the regular containers
// and for the sidecars after them to exit; whatever is left, but at least 2 s, goes to StopContainer.
import type { Clock } from "../../clock.ts";
import type { KubeContainer, KubePod } from "./types.ts";

/** Upstream minimumGracePeriodInSeconds. */
export const MINIMUM_GRACE_PERIOD_SECONDS = 2;

export type KillReason = "liveness" | "startup" | "postStart" | "unknown";

/** upstream setTerminationGracePeriod (no DeletionGracePeriodSeconds for static pods). */
export function terminationGracePeriod(pod: KubePod, container: KubeContainer | undefined, reason: KillReason): number {
  const podSeconds = pod.spec.terminationGracePeriodSeconds ?? 30;
  if (reason === "startup" && container?.startupProbe?.terminationGracePeriodSeconds !== undefined) return container.startupProbe.terminationGracePeriodSeconds;
  if (reason === "liveness" && container?.livenessProbe?.terminationGracePeriodSeconds !== undefined)
    return container.livenessProbe.terminationGracePeriodSeconds;
  return podSeconds;
}

export const isSidecar = (c: KubeContainer) => c.restartPolicy === "Always";

/** A container spec by name, regular, init or ephemeral (upstream kubecontainer.GetContainerSpec). */
export function containerSpec(pod: KubePod | undefined, name: string): KubeContainer | undefined {
  const named = (c: KubeContainer) => c.name === name;
  return pod?.spec.containers.find(named) ?? pod?.spec.initContainers?.find(named) ?? pod?.spec.ephemeralContainers?.find(named);
}

/**
 * Runs the preStop hook bounded by `graceSeconds` and returns the grace period left (upstream: grace −
 * whole seconds the hook took). A hook still running at the deadline is abandoned (its abort fires).
 * The postStart hook runs bounded the same way (container-hooks.ts runPostStartHandler).
 */
export async function runPreStopWithin(
  graceSeconds: number,
  clock: Pick<Clock, "now" | "setTimeout" | "clearTimeout">,
  run: (signal: AbortSignal) => Promise<unknown>,
): Promise<{ remainingSeconds: number; completed: boolean }> {
  const start = clock.now();
  const abort = new AbortController();
  let timer: ReturnType<Clock["setTimeout"]> | undefined;
  const deadline = new Promise<false>((resolve) => {
    timer = clock.setTimeout(() => resolve(false), graceSeconds * 1000);
  });
  const completed = await Promise.race([
    run(abort.signal).then(
      () => true,
      () => true,
    ),
    deadline,
  ]);
  if (timer !== undefined) clock.clearTimeout(timer);
  if (!completed) abort.abort();
  const elapsedSeconds = Math.floor((clock.now() - start) / 1000);
  return { remainingSeconds: graceSeconds - elapsedSeconds, completed };
}

export interface TerminationOrdering {
  /** Waits until every container `name` must outlive has exited, at most `graceSeconds`; returns whole seconds waited. */
  waitForTurn(name: string, graceSeconds: number): Promise<number>;
  containerTerminated(name: string): void;
}

/**
 * upstream newTerminationOrdering: regular containers stop at once; each sidecar waits for every
 * running regular container and every running sidecar declared after it (sidecars stop in reverse order).
 */
export function createTerminationOrdering(
  pod: KubePod,
  runningNames: readonly string[],
  clock: Pick<Clock, "now" | "setTimeout" | "clearTimeout">,
): TerminationOrdering {
  const running = new Set(runningNames);
  const exited = new Map<string, { done: Promise<void>; resolve: () => void }>();
  for (const n of running) {
    let resolve!: () => void;
    const done = new Promise<void>((r) => (resolve = r));
    exited.set(n, { done, resolve });
  }
  const prereqs = new Map<string, string[]>();
  const regular = pod.spec.containers.map((c) => c.name).filter((n) => running.has(n));
  const sidecars = (pod.spec.initContainers ?? [])
    .filter(isSidecar)
    .map((c) => c.name)
    .filter((n) => running.has(n));
  sidecars.forEach((name, i) => {
    prereqs.set(name, [...regular, ...sidecars.slice(i + 1)]);
  });
  return {
    async waitForTurn(name, graceSeconds) {
      const waits = (prereqs.get(name) ?? []).map((n) => exited.get(n)!.done);
      if (waits.length === 0) return 0;
      const start = clock.now();
      let timer: ReturnType<Clock["setTimeout"]> | undefined;
      const deadline = new Promise<void>((r) => (timer = clock.setTimeout(r, Math.max(0, graceSeconds) * 1000)));
      await Promise.race([Promise.all(waits), deadline]);
      if (timer !== undefined) clock.clearTimeout(timer);
      return Math.floor((clock.now() - start) / 1000);
    },
    containerTerminated(name) {
      exited.get(name)?.resolve();
    },
  };
}
