// The per-container probe worker's decision logic (upstream prober/worker.go doProbe), pure: given
// what the container is doing and, when a probe ran, its result, decide whether to probe and which
// result to publish. Thresholds: a result is published only after successThreshold successes or
// failureThreshold failures in a row; after a liveness/startup failure the worker holds until the
// container is replaced, so one failure kills a container once.
export type ProbeKind = "liveness" | "readiness" | "startup";
export type ProbeResult = "success" | "failure" | "unknown";

/** What one probe run gave (probes.ts runProbe, grpc.ts grpcProbe). */
export interface ProbeOutcome {
  result: ProbeResult;
  output: string;
  /** The probe could not be run (the runtime call failed): discard, count nothing. */
  errored?: boolean;
  /** A success the prober reports as a ProbeWarning event (an HTTP redirect it did not follow). */
  warning?: boolean;
}

export interface ProbeThresholds {
  initialDelaySeconds: number;
  successThreshold: number;
  failureThreshold: number;
}

export interface ProbeWorkerState {
  containerId?: string;
  /** Result published to the results manager (what status and restarts see). */
  published: ProbeResult;
  lastResult: ProbeResult;
  resultRun: number;
  onHold: boolean;
}

export interface ContainerView {
  id?: string;
  running: boolean;
  startedAtMs: number;
  /** Startup probe passed (or none): liveness/readiness only run once started. */
  started: boolean;
}

export const initialResult = (kind: ProbeKind): ProbeResult => (kind === "readiness" ? "failure" : kind === "liveness" ? "success" : "unknown");

export function initialState(kind: ProbeKind): ProbeWorkerState {
  return { published: initialResult(kind), lastResult: "unknown", resultRun: 0, onHold: false };
}

/** Before probing: reset on a new container, and say whether a probe should run now. */
export function prepare(
  kind: ProbeKind,
  spec: ProbeThresholds,
  s: ProbeWorkerState,
  c: ContainerView,
  nowMs: number,
): { state: ProbeWorkerState; probe: boolean } {
  let state = s;
  if (!c.id) return { state, probe: false };
  if (c.id !== state.containerId) state = { ...initialState(kind), containerId: c.id };
  if (state.onHold) return { state, probe: false };
  if (!c.running) {
    // A stopped container is not ready/alive; nothing to probe until it runs again.
    return { state: { ...state, published: kind === "startup" ? "unknown" : "failure" }, probe: false };
  }
  if (kind === "startup" && state.published === "success") return { state, probe: false };
  if (kind !== "startup" && !c.started) return { state, probe: false };
  if (nowMs - c.startedAtMs < spec.initialDelaySeconds * 1000) return { state, probe: false };
  return { state, probe: true };
}

/** After a probe ran: count runs, publish at the thresholds, hold after a liveness/startup failure. */
export function record(kind: ProbeKind, spec: ProbeThresholds, s: ProbeWorkerState, result: ProbeResult): ProbeWorkerState {
  const state = { ...s };
  if (state.lastResult === result) state.resultRun++;
  else {
    state.lastResult = result;
    state.resultRun = 1;
  }
  if ((result === "failure" && state.resultRun < spec.failureThreshold) || (result === "success" && state.resultRun < spec.successThreshold)) return state;
  if (result === "unknown") return state;
  state.published = result;
  if ((kind === "liveness" || kind === "startup") && result === "failure") {
    state.onHold = true;
    state.resultRun = 0;
  }
  return state;
}
