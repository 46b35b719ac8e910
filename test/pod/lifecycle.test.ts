import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createPodLifecycle } from "../../src/pod/lifecycle.ts";
import { decodeApiPod } from "../../src/pod/sources/api.ts";
import type { PodLifecycle } from "../../src/pod/lifecycle-types.ts";
import type { Pod } from "../../src/pod/types.ts";
import { createSettlingClock, type SettlingClock } from "../support/settling-clock.ts";
import { createFakeRuntime, makePod, type FakeRuntime } from "./fake-runtime.ts";

let lc: PodLifecycle | undefined;
afterEach(async () => {
  await lc?.stop();
  lc = undefined;
});

async function setup(opts: { pods?: Pod[]; prepare?: (rt: FakeRuntime) => void; probeRunner?: Parameters<typeof createPodLifecycle>[0]["probeRunner"] } = {}) {
  const clock: SettlingClock = createSettlingClock();
  const rt = createFakeRuntime(clock.now);
  opts.prepare?.(rt);
  lc = createPodLifecycle({
    runtime: rt,
    clock,
    config: { nodeName: "node1", hostIP: "192.168.1.10", syncFrequencyMs: 60_000, errorRetryMs: 10_000 },
    probeRunner: opts.probeRunner,
  });
  await lc.start();
  if (opts.pods) lc.handleUpdate({ op: "SET", pods: opts.pods, source: "file" });
  await settle(clock);
  return { clock, rt, lc };
}

async function settle(clock: SettlingClock, ms = 0) {
  await clock.advance(ms);
  await lc!.whenIdle();
  await clock.advance(0);
  await lc!.whenIdle();
}

const status = (name: string) => lc!.listPodsForApi().find((p) => p.metadata.name === name)?.status;

describe("pod lifecycle", () => {
  test("an added pod runs and reports Running/Ready with IPs", async () => {
    const { rt } = await setup({ pods: [makePod({ name: "web", uid: "u1" })] });
    expect(rt.calls).toContain("start web/app#0");
    const s = status("web")!;
    expect(s.phase).toBe("Running");
    expect(s.podIP).toBe("10.88.0.7");
    expect(s.hostIP).toBe("192.168.1.10");
    expect(s.containerStatuses![0]).toMatchObject({ ready: true, restartCount: 0, containerID: expect.stringMatching(/^containerd:\/\//) });
    expect(s.conditions!.find((c) => c.type === "Ready")!.status).toBe("True");
    expect(lc!.activePods().map((p) => p.metadata.name)).toEqual(["web"]);
  });

  test("a crashing container restarts via PLEG with 10 s, 20 s back-off and CrashLoopBackOff in between", async () => {
    const { rt, clock } = await setup({ pods: [makePod({ name: "crash", uid: "u1" })] });
    const starts = () => rt.calls.filter((c) => c.startsWith("start")).length;
    expect(starts()).toBe(1);
    rt.behavior.set("app", { exitCode: 1 }); // every new instance exits at once
    rt.exit("u1", "app", 1);
    await settle(clock, 1000); // PLEG sees ContainerDied → sync → restart #1 (first restart has no back-off)
    expect(starts()).toBe(2);
    await settle(clock, 1000); // dies again → back-off 10 s
    const s = status("crash")!;
    expect(s.containerStatuses![0]!.state.waiting?.reason).toBe("CrashLoopBackOff");
    expect(s.containerStatuses![0]!.state.waiting?.message).toContain("back-off 10s");
    expect(s.containerStatuses![0]!.lastState.terminated).toMatchObject({ exitCode: 1, reason: "Error" });
    expect(s.containerStatuses![0]!.restartCount).toBe(1);
    expect(s.phase).toBe("Running");
    await settle(clock, 8_000);
    expect(starts()).toBe(2);
    await settle(clock, 2_000); // error retry after 10 s, back-off over
    expect(starts()).toBe(3);
    await settle(clock, 12_000);
    expect(starts()).toBe(3); // now 20 s
    await settle(clock, 10_000);
    expect(starts()).toBe(4);
    expect(status("crash")!.containerStatuses![0]!.restartCount).toBe(3);
  });

  test("removing a pod terminates it with its grace period and removes it", async () => {
    const pod = makePod({ name: "web", uid: "u1", spec: { terminationGracePeriodSeconds: 7 } });
    const { rt, clock } = await setup({ pods: [pod] });
    lc!.handleUpdate({ op: "SET", pods: [], source: "file" });
    await settle(clock);
    expect(rt.calls).toContain("kill web grace=7");
    expect(rt.calls).toContain("remove web");
    expect(rt.pods.size).toBe(0);
    expect(lc!.listPodsForApi()).toEqual([]);
  });

  test("an API deletion stops the pod with its deletion grace; its final status stays until the source removes it", async () => {
    const pod = makePod({ name: "web", uid: "u1", spec: { terminationGracePeriodSeconds: 100 } });
    const { rt, clock } = await setup();
    lc!.handleUpdate({ op: "SET", pods: [pod], source: "api" });
    await settle(clock);
    const deleted = { ...pod, metadata: { ...pod.metadata, deletionTimestamp: "2026-01-01T00:00:30Z", deletionGracePeriodSeconds: 30 } };
    lc!.handleUpdate({ op: "DELETE", pods: [deleted], source: "api" });
    await settle(clock);
    expect(rt.calls).toContain("kill web grace=30");
    expect(rt.calls).not.toContain("remove web");
    expect(lc!.isPodCleanedUp(deleted)).toBe(true);
    // What a finalizer keeps in the API: the containers' ends and a terminal phase.
    const s = status("web")!;
    expect(s.phase).toBe("Failed");
    expect(s.containerStatuses![0]!.state.terminated).toMatchObject({ exitCode: 137, reason: "Error" });
    lc!.handleUpdate({ op: "REMOVE", pods: [deleted], source: "api" });
    await settle(clock, 2_000);
    expect(lc!.listPodsForApi()).toEqual([]);
    expect(rt.calls).toContain("remove web");
  });

  test("killPod (eviction): Failed/Evicted, DisruptionTarget, never restarted", async () => {
    const pod = makePod({ name: "hog", uid: "u1" });
    const { rt, clock } = await setup({ pods: [pod] });
    const killed = lc!.killPod(pod, 1, {
      reason: "Evicted",
      message: "The node was low on resource: memory. ",
      annotations: { "bunlet.io/evicted-signal": "memory.available" },
    });
    expect(lc!.activePods()).toEqual([]);
    expect(lc!.isPodCleanedUp(pod)).toBe(false);
    await killed;
    expect(lc!.isPodCleanedUp(pod)).toBe(true);
    expect(rt.calls).toContain("kill hog grace=1");
    // Its volumes are gone before it counts as cleaned up; the pod itself (and its status) stays.
    expect(rt.calls).toContain("teardown-volumes hog");
    expect(rt.calls).not.toContain("remove hog");
    const api = lc!.listPodsForApi()[0]!;
    expect(api.status).toMatchObject({ phase: "Failed", reason: "Evicted", message: "The node was low on resource: memory. " });
    expect(api.status!.conditions![0]).toMatchObject({ type: "DisruptionTarget", status: "True" });
    expect(api.metadata.annotations?.["bunlet.io/evicted-signal"]).toBe("memory.available");
    expect(lc!.activePods()).toEqual([]);
    const startsBefore = rt.calls.filter((c) => c.startsWith("start")).length;
    await settle(clock, 120_000); // PLEG, periodic sync, housekeeping all ran
    lc!.handleUpdate({ op: "SET", pods: [pod], source: "file" }); // same manifest resent
    await settle(clock, 5_000);
    expect(rt.calls.filter((c) => c.startsWith("start")).length).toBe(startsBefore);
    expect(status("hog")!.phase).toBe("Failed");
    expect(rt.pods.get("u1")?.containers.every((c) => c.state === "exited")).toBe(true);
  });

  test("orphans in the runtime are killed and removed by housekeeping; known pods are adopted", async () => {
    const pod = makePod({ name: "web", uid: "u1" });
    const { rt, clock } = await setup({
      prepare: (r) => {
        r.addOrphan("orphan", "old-pod");
        r.addOrphan("u1", "web"); // left running by a previous bunlet
      },
      pods: [pod],
    });
    await settle(clock, 2_000);
    expect(rt.calls).toContain("kill old-pod grace=2");
    expect(rt.calls).toContain("remove old-pod");
    expect(rt.pods.has("orphan")).toBe(false);
    // The adopted pod kept its container: no new start.
    expect(rt.calls.filter((c) => c.startsWith("start"))).toEqual([]);
    expect(status("web")!.phase).toBe("Running");
  });

  test("liveness failure restarts the container", async () => {
    let healthy = true;
    const pod = makePod({
      name: "web",
      uid: "u1",
      containers: [{ name: "app", image: "x", livenessProbe: { exec: { command: ["check"] }, periodSeconds: 1, failureThreshold: 2 } }],
    });
    const { rt, clock } = await setup({ pods: [pod], probeRunner: async () => ({ result: healthy ? "success" : "failure", output: "" }) });
    await settle(clock, 3_000);
    expect(rt.calls.filter((c) => c.startsWith("start"))).toEqual(["start web/app#0"]);
    healthy = false;
    await settle(clock, 3_000);
    healthy = true;
    await settle(clock, 1_000);
    expect(rt.calls.some((c) => c.startsWith("kill web/app (Container app failed liveness probe"))).toBe(true);
    expect(rt.calls.filter((c) => c.startsWith("start"))).toEqual(["start web/app#0", "start web/app#1"]);
    expect(status("web")!.containerStatuses![0]!.restartCount).toBe(1);
  });

  test("readiness drives the Ready condition", async () => {
    let ready = false;
    const pod = makePod({ name: "web", uid: "u1", containers: [{ name: "app", image: "x", readinessProbe: { exec: { command: ["r"] }, periodSeconds: 1 } }] });
    const { clock } = await setup({ pods: [pod], probeRunner: async () => ({ result: ready ? "success" : "failure", output: "" }) });
    await settle(clock, 2_000);
    expect(status("web")!.conditions!.find((c) => c.type === "Ready")!.status).toBe("False");
    ready = true;
    await settle(clock, 2_000);
    expect(status("web")!.conditions!.find((c) => c.type === "Ready")!.status).toBe("True");
  });

  test("a pod being deleted: liveness stops, readiness runs on and its failure makes the pod unready while it stops", async () => {
    const healthy = { readiness: true, liveness: true };
    const ran: string[] = [];
    const pod = makePod({
      name: "web",
      uid: "u1",
      containers: [
        {
          name: "app",
          image: "x",
          readinessProbe: { exec: { command: ["readiness"] }, periodSeconds: 1, failureThreshold: 1 },
          livenessProbe: { exec: { command: ["liveness"] }, periodSeconds: 1, failureThreshold: 1 },
        },
      ],
    });
    let stopped!: () => void;
    const { rt, clock } = await setup({
      pods: [pod],
      probeRunner: async (p) => {
        const kind = p.exec!.command[0] as keyof typeof healthy;
        ran.push(kind);
        return { result: healthy[kind] ? "success" : "failure", output: "" };
      },
      // The container takes its time to stop (its SIGTERM handler runs).
      prepare: (r) => {
        const kill = r.killPod.bind(r);
        r.killPod = async (...a) => {
          await new Promise<void>((done) => (stopped = done));
          return kill(...a);
        };
      },
    });
    await settle(clock, 2_000);
    expect(status("web")!.conditions!.find((c) => c.type === "Ready")!.status).toBe("True");
    const deleting = { ...pod, metadata: { ...pod.metadata, deletionTimestamp: "2026-01-01T00:00:10Z", deletionGracePeriodSeconds: 30 } };
    lc!.handleUpdate({ op: "DELETE", pods: [deleting], source: "file" });
    await clock.advance(1_000);
    healthy.readiness = false;
    healthy.liveness = false;
    ran.length = 0;
    await clock.advance(3_000);
    expect(ran.length).toBeGreaterThan(0);
    expect(ran.every((k) => k === "readiness")).toBe(true);
    // The API source still lists the pod: its status is what the status manager PATCHes.
    const s = lc!.getPodStatus("u1")!;
    expect(s.containerStatuses![0]!.state.running).toBeDefined();
    expect(s.conditions!.find((c) => c.type === "Ready")).toMatchObject({ status: "False", reason: "ContainersNotReady" });
    stopped();
    await settle(clock, 1_000);
    expect(rt.calls.some((c) => c.includes("failed liveness probe"))).toBe(false);
  });

  test("restartPolicy Never: exit 0 → Succeeded and never restarted", async () => {
    const pod = makePod({ name: "job", uid: "u1", spec: { restartPolicy: "Never" } });
    const { rt, clock } = await setup({ pods: [pod] });
    rt.exit("u1", "app", 0);
    await settle(clock, 1_000);
    expect(status("job")!.phase).toBe("Succeeded");
    await settle(clock, 120_000);
    expect(rt.calls.filter((c) => c.startsWith("start"))).toHaveLength(1);
  });

  test("admission handlers can reject a pod: Failed with their reason, never started", async () => {
    const clock = createSettlingClock();
    const rt = createFakeRuntime(clock.now);
    lc = createPodLifecycle({ runtime: rt, clock, config: { nodeName: "n", hostIP: "1.2.3.4" } });
    lc.addAdmitHandler((pod) =>
      pod.metadata.name === "besteffort" ? { admit: false, reason: "Evicted", message: "The node had condition: [MemoryPressure]. " } : { admit: true },
    );
    await lc.start();
    lc.handleUpdate({ op: "SET", pods: [makePod({ name: "besteffort", uid: "b" }), makePod({ name: "ok", uid: "o" })], source: "file" });
    await settle(clock);
    expect(status("besteffort")).toMatchObject({ phase: "Failed", reason: "Evicted" });
    expect(rt.calls.filter((c) => c.startsWith("start"))).toEqual(["start ok/app#0"]);
  });

  test("an admitted pod with waitFor (it preempted others) starts once that settles; the first refusal ends admission", async () => {
    const clock = createSettlingClock();
    const rt = createFakeRuntime(clock.now);
    lc = createPodLifecycle({ runtime: rt, clock, config: { nodeName: "n", hostIP: "1.2.3.4" } });
    let release!: () => void;
    const preempted = new Promise<void>((r) => (release = r));
    const asked: string[] = [];
    lc.addAdmitHandler((pod) => (pod.metadata.name === "refused" ? { admit: false, reason: "OutOfcpu", message: "no" } : { admit: true }));
    lc.addAdmitHandler((pod) => {
      asked.push(pod.metadata.name);
      return pod.metadata.name === "critical" ? { admit: true, waitFor: preempted } : { admit: true };
    });
    await lc.start();
    lc.handleUpdate({ op: "SET", pods: [makePod({ name: "critical", uid: "c" }), makePod({ name: "refused", uid: "r" })], source: "file" });
    await settle(clock);
    expect(asked).toEqual(["critical"]);
    expect(rt.calls.filter((c) => c.startsWith("start"))).toEqual([]);
    release();
    await settle(clock);
    expect(rt.calls.filter((c) => c.startsWith("start"))).toEqual(["start critical/app#0"]);
  });

  test("a static pod edit (new UID, same name) starts after the old one stopped", async () => {
    const v1 = makePod({ name: "web", uid: "u1" });
    const { rt, clock } = await setup({ pods: [v1] });
    const v2 = makePod({ name: "web", uid: "u2", containers: [{ name: "app", image: "v2" }] });
    lc!.handleUpdate({ op: "SET", pods: [v2], source: "file" });
    await settle(clock);
    const i = rt.calls.indexOf("kill web grace=30");
    const j = rt.calls.findIndex((c, k) => k > 0 && c === "start web/app#0" && rt.calls.indexOf("start web/app#0") !== k);
    expect(i).toBeGreaterThan(-1);
    expect(j).toBeGreaterThan(i);
    expect(rt.maxConcurrency).toBe(1);
    expect(lc!.listPodsForApi().map((p) => p.metadata.uid)).toEqual(["u2"]);
  });
});

describe("lifecycle with a real staticPodPath", () => {
  test("a new manifest runs within well under a second; deleting it stops the pod", async () => {
    const { mkdtempSync, rmSync, writeFileSync, unlinkSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const { join } = await import("node:path");
    const { realClock } = await import("../../src/clock.ts");
    const { waitFor } = await import("../support/cgroup.ts");
    const dir = mkdtempSync(join(tmpdir(), `bunlet-lc-${process.pid}-`));
    try {
      const rt = createFakeRuntime(() => Date.now());
      lc = createPodLifecycle({
        runtime: rt,
        clock: realClock,
        config: { nodeName: "n1", hostIP: "10.0.0.1", staticPodPath: dir, fileCheckFrequencyMs: 3_600_000, syncFrequencyMs: 3_600_000 },
      });
      await lc.start();
      expect(lc.sourcesReady()).toBe(true);
      const t0 = Date.now();
      writeFileSync(
        join(dir, "web.yaml"),
        "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  containers: [{name: app, image: bunlet.local/busybox:1}]\n",
      );
      await waitFor(() => rt.calls.includes("start web-n1/app#0"), "pod start");
      const elapsed = Date.now() - t0;
      console.log(`manifest → container start: ${elapsed} ms`);
      writeFileSync(
        join(dir, "bad.yaml"),
        "apiVersion: v1\nkind: Pod\nmetadata: {name: bad}\nspec:\n  containers: [{name: app, image: x, env: [{name: A, valueFrom: {}}]}]\n",
      );
      await waitFor(() => lc!.manifestErrors().length === 1, "manifest error");
      expect(lc.manifestErrors()[0]!.message).toContain("bad.yaml: spec.containers[0].env[0].valueFrom");
      unlinkSync(join(dir, "web.yaml"));
      await waitFor(() => rt.calls.includes("remove web-n1"), "pod removal");
      expect(lc.listPodsForApi()).toEqual([]);
    } finally {
      await lc?.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("sources readiness gates orphan cleanup", () => {
  test("runtime pods survive until every expected source delivered its first SET", async () => {
    const clock = createSettlingClock();
    const rt = createFakeRuntime(clock.now);
    rt.addOrphan("u-api", "from-api");
    lc = createPodLifecycle({ runtime: rt, clock, config: { nodeName: "n", hostIP: "1.2.3.4", extraSources: ["api"] } });
    await lc.start();
    await settle(clock, 10_000);
    expect(lc.sourcesReady()).toBe(false);
    expect(rt.pods.has("u-api")).toBe(true);
    lc.handleUpdate({ op: "SET", pods: [makePod({ name: "from-api", uid: "u-api" })], source: "api" });
    await settle(clock, 4_000);
    expect(lc.sourcesReady()).toBe(true);
    expect(rt.pods.has("u-api")).toBe(true); // adopted, not an orphan
    expect(rt.calls.filter((c) => c.startsWith("kill"))).toEqual([]);
  });
});

describe("readiness gates", () => {
  test("a gate's condition set in the API status reaches the pod (RECONCILE) and makes it Ready", async () => {
    const raw = (lb?: "True" | "False") => ({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "gated", namespace: "default", uid: "u-gated", resourceVersion: lb ? "2" : "1" },
      spec: { nodeName: "node1", readinessGates: [{ conditionType: "example.com/lb" }], containers: [{ name: "app", image: "bunlet.local/busybox:1" }] },
      status: {
        phase: "Running",
        conditions: [
          { type: "Ready", status: "False", lastProbeTime: null, lastTransitionTime: "2026-01-01T00:00:00Z" },
          ...(lb ? [{ type: "example.com/lb", status: lb, lastProbeTime: null, lastTransitionTime: "2026-01-01T00:00:01Z" }] : []),
        ],
      },
    });
    const decoded = (lb?: "True" | "False") => decodeApiPod(raw(lb)).pod!;
    const { clock } = await setup();
    const ready = () => status("gated")!.conditions!.find((c) => c.type === "Ready")!;
    lc!.handleUpdate({ op: "SET", pods: [decoded()], source: "api" });
    await settle(clock);
    expect(ready()).toMatchObject({
      status: "False",
      reason: "ReadinessGatesNotReady",
      message: 'corresponding condition of pod readiness gate "example.com/lb" does not exist.',
    });
    lc!.handleUpdate({ op: "SET", pods: [decoded("False")], source: "api" });
    await settle(clock);
    expect(ready()).toMatchObject({ status: "False", message: 'the status of pod readiness gate "example.com/lb" is not "True", but False' });
    lc!.handleUpdate({ op: "SET", pods: [decoded("True")], source: "api" });
    await settle(clock);
    expect(ready().status).toBe("True");
    expect(status("gated")!.conditions!.find((c) => c.type === "ContainersReady")!.status).toBe("True");
  });
});

describe("init containers", () => {
  test("run to completion before the app container; Initialized condition follows", async () => {
    const pod = makePod({ name: "web", uid: "u1", initContainers: [{ name: "setup", image: "x" }] });
    const { rt, clock } = await setup({ prepare: (r) => r.behavior.set("setup", { exitCode: 0 }), pods: [pod] });
    expect(status("web")!.phase).toBe("Pending");
    await settle(clock, 1000); // PLEG sees the init container's exit → next sync starts the app
    expect(rt.calls.filter((c) => c.startsWith("start"))).toEqual(["start web/setup#0", "start web/app#0"]);
    const s = status("web")!;
    expect(s.phase).toBe("Running");
    expect(s.initContainerStatuses![0]!.state.terminated).toMatchObject({ exitCode: 0, reason: "Completed" });
    expect(s.conditions!.find((c) => c.type === "Initialized")!.status).toBe("True");
  });

  test("a failing init container with restartPolicy Never fails the pod", async () => {
    const pod = makePod({ name: "web", uid: "u1", initContainers: [{ name: "setup", image: "x" }], spec: { restartPolicy: "Never" } });
    const { rt, clock } = await setup({ prepare: (r) => r.behavior.set("setup", { exitCode: 2 }), pods: [pod] });
    await settle(clock, 30_000);
    expect(status("web")!.phase).toBe("Failed");
    expect(status("web")!.conditions!.find((c) => c.type === "Initialized")).toMatchObject({ status: "False" });
    expect(rt.calls.filter((c) => c.startsWith("start"))).toEqual(["start web/setup#0"]);
  });
});

describe("a kill preempts a slow sync", () => {
  test("the runtime's kill is not queued behind the sync; what the preempted sync started is stopped too", async () => {
    const pod = makePod({ name: "hog", uid: "u1" });
    const { rt, clock } = await setup({ pods: [pod] });
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let entered = false;
    const sync = rt.syncPod.bind(rt);
    rt.syncPod = async (...args) => {
      entered = true;
      await gate;
      return sync(...args);
    };
    const until = async (cond: () => boolean, what: string) => {
      for (let i = 0; i < 1000 && !cond(); i++) await new Promise((r) => setImmediate(r));
      if (!cond()) throw new Error(`never: ${what}`);
    };
    rt.exit("u1", "app", 1); // PLEG → sync → restart, held at the runtime
    await clock.advance(1000);
    await until(() => entered, "the sync reached the runtime");
    const killed = lc!.killPod(pod, 1, { reason: "Evicted", message: "The node was low on resource: memory. " });
    await until(() => rt.calls.includes("kill hog grace=1"), "the kill reached the runtime");
    expect(rt.calls.filter((c) => c.startsWith("start"))).toEqual(["start hog/app#0"]); // the sync is still held
    release();
    await killed;
    expect(rt.calls.filter((c) => c.startsWith("start") || c.startsWith("kill"))).toEqual([
      "start hog/app#0",
      "kill hog grace=1",
      "start hog/app#1",
      "kill hog grace=1",
    ]);
    expect(rt.pods.get("u1")?.containers.every((c) => c.state === "exited")).toBe(true);
    expect(status("hog")).toMatchObject({ phase: "Failed", reason: "Evicted" });
    expect(lc!.isPodCleanedUp(pod)).toBe(true);
  });
});

describe("serialization under load", () => {
  test("bursts of updates, PLEG events and kills never overlap runtime calls of one pod", async () => {
    const pods = Array.from({ length: 5 }, (_, i) => makePod({ name: `p${i}`, uid: `u${i}` }));
    const { rt, clock } = await setup({ pods });
    for (let round = 0; round < 5; round++) {
      for (const p of pods) {
        rt.exit(p.metadata.uid, "app", 1);
        lc!.handleUpdate({ op: "UPDATE", pods: [{ ...p, metadata: { ...p.metadata, labels: { round: String(round) } } }], source: "file" });
      }
      await clock.advance(1000);
    }
    const kills = pods.slice(0, 2).map((p) => lc!.killPod(p, 1, { reason: "Evicted", message: "test" }));
    await settle(clock, 30_000);
    await Promise.all(kills);
    expect(rt.maxConcurrency).toBe(1);
    expect(
      lc!
        .activePods()
        .map((p) => p.metadata.name)
        .sort(),
    ).toEqual(["p2", "p3", "p4"]);
  });
});

describe("activeDeadlineSeconds", () => {
  test("a pod active longer than its deadline fails with DeadlineExceeded and is stopped", async () => {
    const pod = makePod({ name: "job", uid: "u1", spec: { activeDeadlineSeconds: 30 } });
    const { rt, clock } = await setup({ pods: [pod] });
    await settle(clock, 29_000);
    expect(status("job")!.phase).toBe("Running");
    await settle(clock, 1_000);
    await settle(clock, 0);
    expect(status("job")).toMatchObject({
      phase: "Failed",
      reason: "DeadlineExceeded",
      message: "Pod was active on the node longer than the specified deadline",
    });
    expect(rt.calls).toContain("kill job grace=30");
    expect(lc!.activePods()).toEqual([]);
  });
});

describe("container GC", () => {
  test("runs every minute; only pods no source wants and whose worker is done count as removed", async () => {
    const calls: { live: boolean; gone: boolean; ready: boolean }[] = [];
    const { clock, lc: l } = await setup({
      pods: [makePod({ name: "web", uid: "u1" })],
      prepare: (r) => {
        r.garbageCollect = async (pods) =>
          void calls.push({ live: pods.contentRemovable("u1"), gone: pods.contentRemovable("u-gone"), ready: pods.allSourcesReady });
      },
    });
    expect(calls).toEqual([]);
    await settle(clock, 60_000);
    expect(calls).toEqual([{ live: false, gone: true, ready: true }]);
    await settle(clock, 60_000);
    expect(calls.length).toBe(2);
    l.handleUpdate({ op: "REMOVE", pods: [makePod({ name: "web", uid: "u1" })], source: "file" });
    await settle(clock, 60_000);
    expect(calls.at(-1)).toMatchObject({ live: true });
  });
});

describe("runtime status reads", () => {
  /** Records every getPodStatus of the fake runtime as "status <uid>" among its calls. */
  const countStatusReads = (rt: FakeRuntime) => {
    const read = rt.getPodStatus.bind(rt);
    rt.getPodStatus = (uid, name, ns) => (rt.calls.push(`status ${uid}`), read(uid, name, ns));
  };
  const reads = (rt: FakeRuntime, uid: string) => rt.calls.filter((c) => c === `status ${uid}`).length;

  test("a new pod the last relist did not show starts without reading its runtime status first; one it showed is read", async () => {
    const { rt, clock } = await setup({
      prepare: (r) => {
        countStatusReads(r);
        r.addOrphan("u-adopted", "adopted");
      },
    });
    await settle(clock, 1000); // a relist: shows u-adopted, nothing of u-new
    lc!.handleUpdate({ op: "SET", pods: [makePod({ name: "new", uid: "u-new" }), makePod({ name: "adopted", uid: "u-adopted" })], source: "file" });
    await settle(clock);
    // u-new: only the status after its sync; u-adopted: read before its sync, and after.
    expect(rt.calls.filter((c) => c === "status u-new" || c === "sync new")).toEqual(["sync new", "status u-new"]);
    expect(reads(rt, "u-adopted")).toBe(2);
    expect(status("new")!.phase).toBe("Running");
  });

  test("a sync that failed half-way makes the next one read the runtime, never assume it empty", async () => {
    const { rt, clock } = await setup({ prepare: countStatusReads });
    await settle(clock, 1000);
    // Relists that started before the sandbox was made, all the while: they show nothing of the pod.
    const empty = await rt.getPods(true);
    rt.getPods = async () => empty;
    const sync = rt.syncPod.bind(rt);
    let failOnce = true;
    rt.syncPod = async (pod, st, b, o) => {
      const r = await sync(pod, st, b, o); // the sandbox and container are made …
      if (failOnce) {
        failOnce = false;
        throw new Error("connection reset"); // … but the call fails on the way back
      }
      return r;
    };
    lc!.handleUpdate({ op: "SET", pods: [makePod({ name: "web", uid: "u1" })], source: "file" });
    await settle(clock);
    await settle(clock, 10_000); // the error retry reads what the failed sync left
    const syncs = rt.calls.filter((c) => c === "status u1" || c === "sync web");
    expect(syncs.slice(0, 3)).toEqual(["sync web", "status u1", "sync web"]);
    expect(rt.calls.filter((c) => c.startsWith("start web/"))).toEqual(["start web/app#0"]);
  });
});

describe("container log rotation in the lifecycle", () => {
  test("stop() lets a container log rotation caught between its rename and the runtime's reopen finish: the current log is there", async () => {
    const d = mkdtempSync(join(tmpdir(), "bunlet-lc-rot-"));
    try {
      const current = join(d, "0.log");
      writeFileSync(current, "x".repeat(4096));
      const clock = createSettlingClock();
      const rt = createFakeRuntime(clock.now);
      let reopenAsked!: () => void;
      const asked = new Promise<void>((r) => (reopenAsked = r));
      let release!: () => void;
      const released = new Promise<void>((r) => (release = r));
      rt.listContainerLogs = async () => [{ containerId: "c1", logPath: current }];
      rt.reopenContainerLog = async () => {
        reopenAsked();
        await released;
        writeFileSync(current, ""); // the runtime opens a new current log
      };
      lc = createPodLifecycle({
        runtime: rt,
        clock,
        config: { nodeName: "n", hostIP: "1.2.3.4", containerLogMaxSize: "1Ki", containerLogMaxFiles: 2, containerLogMonitorIntervalMs: 1_000 },
      });
      await lc.start();
      void clock.advance(1_000);
      await asked; // renamed, the reopen pending
      expect(existsSync(current)).toBe(false);
      const stopping = lc.stop();
      setImmediate(release);
      await stopping;
      lc = undefined;
      expect(existsSync(current)).toBe(true);
    } finally {
      rmSync(d, { recursive: true, force: true });
    }
  });
});
