// An in-memory Runtime for pod-lifecycle tests: containers start and exit when the test says so,
// syncPod applies a simplified upstream computePodActions (init containers in order, restartPolicy,
// back-off with CrashLoopBackOff, liveness restarts). Records calls and per-pod concurrency.
import { formatBackOff } from "../../src/pod/backoff.ts";
import type { PodLike } from "../../src/pod/pod-like.ts";
import type { BackOff, Runtime, RuntimeContainerStatus, RuntimePod, RuntimePodStatus, SyncPodOptions, SyncPodResult } from "../../src/pod/runtime.ts";
import { podSchema, type Pod } from "../../src/pod/types.ts";

export function makePod(o: {
  name: string;
  uid?: string;
  namespace?: string;
  containers?: Record<string, unknown>[];
  initContainers?: Record<string, unknown>[];
  spec?: Record<string, unknown>;
  annotations?: Record<string, string>;
}): Pod {
  return podSchema.parse({
    metadata: { name: o.name, namespace: o.namespace ?? "default", uid: o.uid ?? `uid-${o.name}`, annotations: o.annotations },
    spec: {
      containers: o.containers ?? [{ name: "app", image: "bunlet.local/busybox:1" }],
      ...(o.initContainers ? { initContainers: o.initContainers } : {}),
      ...o.spec,
    },
  });
}

interface FakePod {
  uid: string;
  name: string;
  namespace: string;
  sandbox?: { id: string; ip: string; state: "ready" | "notready"; createdAtMs: number };
  containers: RuntimeContainerStatus[];
}

/** What a started container does: keep running, or exit at once with a code. */
export type Behavior = { exitCode: number; reason?: string } | "run";

export interface FakeRuntime extends Runtime {
  pods: Map<string, FakePod>;
  calls: string[];
  /** Highest number of concurrent runtime calls seen for one pod uid. */
  maxConcurrency: number;
  behavior: Map<string, Behavior>;
  exit(uid: string, container: string, exitCode: number, reason?: string): void;
  /** Adds a pod the runtime runs but no source knows (an orphan). */
  addOrphan(uid: string, name: string): void;
  execResults: Map<string, number>;
  latest(uid: string, container: string): RuntimeContainerStatus | undefined;
}

export function createFakeRuntime(now: () => number): FakeRuntime {
  const pods = new Map<string, FakePod>();
  const calls: string[] = [];
  const inFlight = new Map<string, number>();
  const behavior = new Map<string, Behavior>();
  const execResults = new Map<string, number>();
  let seq = 0;
  const maxConcurrency = 0;

  const enter = async <T>(uid: string, fn: () => T): Promise<T> => {
    const n = (inFlight.get(uid) ?? 0) + 1;
    inFlight.set(uid, n);
    rt.maxConcurrency = Math.max(rt.maxConcurrency, n);
    try {
      await new Promise((r) => setImmediate(r)); // a real await point, so overlaps would show
      return fn();
    } finally {
      inFlight.set(uid, (inFlight.get(uid) ?? 1) - 1);
    }
  };

  const latest = (uid: string, name: string) =>
    pods
      .get(uid)
      ?.containers.filter((c) => c.name === name)
      .sort((a, b) => b.attempt - a.attempt)[0];

  const start = (p: FakePod, name: string, image: string, attempt: number) => {
    const b = behavior.get(name) ?? "run";
    const t = now();
    const c: RuntimeContainerStatus = {
      id: `c${++seq}`,
      name,
      image,
      imageRef: `sha256:${name}`,
      state: "running",
      createdAtMs: t,
      startedAtMs: t,
      finishedAtMs: 0,
      attempt,
    };
    if (b !== "run") Object.assign(c, { state: "exited", finishedAtMs: t, exitCode: b.exitCode, reason: b.reason });
    p.containers.push(c);
    calls.push(`start ${p.name}/${name}#${attempt}`);
  };

  const stop = (c: RuntimeContainerStatus, exitCode: number, reason: string) => {
    if (c.state !== "running") return;
    Object.assign(c, { state: "exited", finishedAtMs: now(), exitCode, reason });
  };

  const rt: FakeRuntime = {
    pods,
    calls,
    behavior,
    execResults,
    maxConcurrency,
    latest,
    async version() {
      return { runtimeName: "containerd", runtimeVersion: "fake" };
    },
    async getPods(): Promise<RuntimePod[]> {
      return [...pods.values()].map((p) => ({
        uid: p.uid,
        name: p.name,
        namespace: p.namespace,
        sandboxIds: p.sandbox ? [p.sandbox.id] : [],
        readySandboxes: p.sandbox?.state === "ready" ? 1 : 0,
        containers: p.containers.map((c) => ({ id: c.id, name: c.name, state: c.state })),
      }));
    },
    async getPodStatus(uid, name, namespace): Promise<RuntimePodStatus> {
      const p = pods.get(uid);
      return {
        uid,
        name,
        namespace,
        sandboxes: p?.sandbox ? [{ id: p.sandbox.id, attempt: 0, state: p.sandbox.state, createdAtMs: p.sandbox.createdAtMs, ip: p.sandbox.ip }] : [],
        containers: structuredClone(p?.containers ?? []).sort((a, b) => b.createdAtMs - a.createdAtMs || b.attempt - a.attempt),
      };
    },
    syncPod(pod: PodLike, _status: RuntimePodStatus, backOff: BackOff, options?: SyncPodOptions): Promise<SyncPodResult> {
      const uid = pod.metadata.uid!;
      return enter(uid, () => {
        calls.push(`sync ${pod.metadata.name}`);
        const spec = pod.spec as Pod["spec"];
        let p = pods.get(uid);
        if (!p) pods.set(uid, (p = { uid, name: pod.metadata.name, namespace: pod.metadata.namespace ?? "default", containers: [] }));
        if (p.sandbox?.state !== "ready") p.sandbox = { id: `s${++seq}`, ip: "10.88.0.7", state: "ready", createdAtMs: now() };
        const errors: SyncPodResult["errors"] = [];
        for (const u of options?.unhealthy ?? []) {
          const c = latest(uid, u.container);
          if (c?.state === "running") {
            stop(c, 137, "Error");
            calls.push(`kill ${p.name}/${u.container} (${u.message})`);
          }
        }
        const restartable = (c: RuntimeContainerStatus) => spec.restartPolicy === "Always" || (spec.restartPolicy === "OnFailure" && c.exitCode !== 0);
        const ensure = (name: string, image: string, isInit: boolean): boolean => {
          const c = latest(uid, name);
          if (!c) {
            start(p, name, image, 0);
            return false;
          }
          if (c.state === "running") return !isInit;
          if (c.state === "exited" && isInit && c.exitCode === 0) return true;
          if (c.state === "exited" && (isInit ? spec.restartPolicy !== "Never" : restartable(c))) {
            const key = `${uid}_${name}`;
            if (backOff.isInBackOff(key, now(), c.finishedAtMs)) {
              errors.push({
                container: name,
                reason: "CrashLoopBackOff",
                message: `back-off ${formatBackOff(backOff.delayMs?.(key) ?? 0)} restarting failed container=${name} pod=${pod.metadata.name}_${pod.metadata.namespace}(${uid})`,
              });
              return false;
            }
            backOff.next(key, now());
            start(p, name, image, c.attempt + 1);
          }
          return false;
        };
        for (const ic of spec.initContainers ?? []) if (!ensure(ic.name, ic.image, true)) return { errors };
        for (const c of spec.containers) ensure(c.name, c.image, false);
        return { errors };
      });
    },
    killPod(pod, gracePeriodSeconds) {
      return enter(pod.uid, () => {
        calls.push(`kill ${pod.name} grace=${gracePeriodSeconds}`);
        const p = pods.get(pod.uid);
        if (!p) return;
        for (const c of p.containers) stop(c, 137, "Error");
        if (p.sandbox) p.sandbox.state = "notready";
      });
    },
    removePod(uid) {
      return enter(uid, () => {
        calls.push(`remove ${pods.get(uid)?.name ?? uid}`);
        pods.delete(uid);
      });
    },
    tearDownVolumes(uid) {
      return enter(uid, () => {
        calls.push(`teardown-volumes ${pods.get(uid)?.name ?? uid}`);
      });
    },
    async execSync(containerId, cmd) {
      return { exitCode: execResults.get(`${containerId} ${cmd.join(" ")}`) ?? execResults.get(cmd.join(" ")) ?? 0, stdout: "", stderr: "" };
    },
    exit(uid, container, exitCode, reason) {
      const c = latest(uid, container);
      if (!c) throw new Error(`no container ${container} in ${uid}`);
      stop(c, exitCode, reason ?? (exitCode === 0 ? "Completed" : "Error"));
    },
    addOrphan(uid, name) {
      pods.set(uid, {
        uid,
        name,
        namespace: "default",
        sandbox: { id: `s${++seq}`, ip: "10.88.0.9", state: "ready", createdAtMs: now() },
        containers: [{ id: `c${++seq}`, name: "app", image: "x", state: "running", createdAtMs: now(), startedAtMs: now(), finishedAtMs: 0, attempt: 0 }],
      });
    },
  };
  return rt;
}
