// Init container actions of a pod with sidecars (restartable init containers, `restartPolicy: Always`
// on an init container): upstream computeInitContainerActions (kuberuntime_container.go, the
// SidecarContainers path). Init containers start in order; a sidecar counts as initialized once it
// runs and its startup probe (if any) succeeded, and the next init container starts then; sidecars
// that exit are restarted, those failing startup/liveness or changed are killed and restarted; regular
// init containers behave as before. Pods without sidecars keep compute-actions.ts's older path.
import type { RuntimePodStatus } from "../runtime.ts";
import { containerChanged } from "./hash.ts";
import { isSidecar } from "./termination.ts";
import type { ContainerToKill, KubeContainer, KubePod } from "./types.ts";

export interface InitActionsInput {
  pod: KubePod;
  status: RuntimePodStatus;
  /** Newest status of a container by name. */
  latest: (name: string) => RuntimePodStatus["containers"][number] | undefined;
  /** The sidecar's startup probe passed for its current instance (true when it has none). */
  started: (name: string) => boolean;
  /** Sidecars whose liveness/startup probe failed (to kill and restart). */
  unhealthy: Map<string, { message: string; probe?: "liveness" | "startup" }>;
  restartOnFailure: boolean;
}

export interface InitActions {
  /** Init containers (sidecars or regular) to start, in spec order. */
  toStart: string[];
  toKill: ContainerToKill[];
  /** Every init container is done (regular ones exited 0, sidecars started): regular containers may run. */
  initialized: boolean;
  /** A regular init container failed and restartPolicy is Never: the pod has failed. */
  initFailed?: { name: string };
}

const isFailed = (s: { state: string; exitCode?: number }) => s.state === "unknown" || (s.state === "exited" && s.exitCode !== 0);

export function computeInitContainerActions(input: InitActionsInput): InitActions {
  const { pod, latest } = input;
  const inits = pod.spec.initContainers ?? [];
  const out: InitActions = { toStart: [], toKill: [], initialized: false };
  if (inits.length === 0) return { ...out, initialized: true };
  // A regular container created or running: initialization happened before (its exited state does
  // not count: after a reboot every container is exited and the new sandbox must initialize again).
  let initialized = input.pod.spec.containers.some((c) => ["created", "running"].includes(latest(c.name)?.state ?? ""));
  let previouslyInitialized = initialized;
  const start: number[] = [];
  for (let i = inits.length - 1; i >= 0; i--) {
    const c = inits[i] as KubeContainer;
    const s = latest(c.name);
    if (!s) {
      if (previouslyInitialized && isSidecar(c)) start.push(i);
      continue;
    }
    if (previouslyInitialized && !isSidecar(c)) continue;
    const r = step(input, c, s, i, previouslyInitialized, inits.length, out);
    if (r === "failed") return { toStart: [], toKill: out.toKill, initialized: false, initFailed: { name: c.name } };
    if (r.start !== undefined) start.push(...r.start);
    if (r.initialized) initialized = true;
    previouslyInitialized = true;
  }
  if (!previouslyInitialized) start.push(0);
  out.toStart = [...new Set(start.sort((a, b) => a - b))].map((i) => (inits[i] as KubeContainer).name);
  out.initialized = initialized;
  return out;
}

type Step = "failed" | { start?: number[]; initialized?: boolean };

function step(
  input: InitActionsInput,
  c: KubeContainer,
  s: NonNullable<ReturnType<InitActionsInput["latest"]>>,
  i: number,
  previouslyInitialized: boolean,
  count: number,
  out: InitActions,
): Step {
  const last = i === count - 1;
  const kill = (message: string, reason?: "liveness" | "startup") => out.toKill.push({ id: s.id, name: c.name, message, ...(reason ? { reason } : {}) });
  switch (s.state) {
    case "created":
      return { start: [i] };
    case "running": {
      if (!isSidecar(c)) return {};
      const bad = input.unhealthy.get(c.name);
      if (bad?.probe === "startup") {
        kill(`Init container ${c.name} failed startup probe`, "startup");
        return { start: [i] };
      }
      if (!input.started(c.name)) return {};
      const next: number[] = [];
      let initialized = false;
      if (last) initialized = true;
      else if (!previouslyInitialized) next.push(i + 1);
      if (containerChanged(c, s.hash)) {
        kill(`Init container ${c.name} definition changed`);
        return { start: [...next, i], initialized };
      }
      if (bad?.probe === "liveness") {
        kill(`Init container ${c.name} failed liveness probe`, "liveness");
        return { start: [...next, i], initialized };
      }
      return { start: next, initialized };
    }
    case "exited":
      if (isSidecar(c)) return { start: [i] };
      if (isFailed(s)) return input.restartOnFailure ? { start: [i] } : "failed";
      return last ? { initialized: true } : { start: [i + 1] };
    default:
      if (!isSidecar(c) && !input.restartOnFailure) return "failed";
      kill(`Init container is in "${s.state}" state, try killing it before restart`);
      return { start: [i] };
  }
}
