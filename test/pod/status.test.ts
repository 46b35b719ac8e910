import { describe, expect, test } from "bun:test";
import type { RuntimeContainerStatus, RuntimePodStatus } from "../../src/pod/runtime.ts";
import { generatePodStatus, getPhase, terminalStatus, withContainerReadiness } from "../../src/pod/status.ts";
import type { ContainerStatus } from "../../src/pod/types.ts";
import { makePod } from "./fake-runtime.ts";

type S = "running" | "ok" | "fail" | "waiting" | "crashloop" | "none";
function cs(name: string, s: S): ContainerStatus | undefined {
  const base = { name, ready: false, restartCount: 0, image: "i", imageID: "", lastState: {} };
  switch (s) {
    case "running":
      return { ...base, state: { running: {} } };
    case "ok":
      return { ...base, state: { terminated: { exitCode: 0 } } };
    case "fail":
      return { ...base, state: { terminated: { exitCode: 1 } } };
    case "waiting":
      return { ...base, state: { waiting: { reason: "ContainerCreating" } } };
    case "crashloop":
      return { ...base, state: { waiting: { reason: "CrashLoopBackOff" } }, lastState: { terminated: { exitCode: 1 } } };
    case "none":
      return undefined;
  }
}

describe("getPhase", () => {
  test.each<[string, S[], S[], "Always" | "OnFailure" | "Never", boolean, string]>([
    ["all running", [], ["running", "running"], "Always", false, "Running"],
    ["one waiting", [], ["running", "waiting"], "Always", false, "Pending"],
    ["unknown container", [], ["running", "none"], "Always", false, "Pending"],
    ["init running", ["running"], ["waiting"], "Always", false, "Pending"],
    ["init failed, Never", ["fail"], ["waiting"], "Never", false, "Failed"],
    ["init failed, Always", ["fail"], ["waiting"], "Always", false, "Pending"],
    ["crashloop, Always", [], ["crashloop"], "Always", false, "Running"],
    ["all exited 0, Always", [], ["ok", "ok"], "Always", false, "Running"],
    ["all exited 0, Never", [], ["ok", "ok"], "Never", false, "Succeeded"],
    ["one failed, Never", [], ["ok", "fail"], "Never", false, "Failed"],
    ["one failed, OnFailure", [], ["ok", "fail"], "OnFailure", false, "Running"],
    ["all ok, OnFailure", [], ["ok"], "OnFailure", false, "Succeeded"],
    ["terminal pod, Always, failures", [], ["ok", "fail"], "Always", true, "Failed"],
    ["terminal pod, Always, all ok", [], ["ok"], "Always", true, "Succeeded"],
  ])("%s", (_n, inits, regs, restartPolicy, terminal, want) => {
    const pod = makePod({
      name: "p",
      initContainers: inits.map((_, i) => ({ name: `i${i}`, image: "x" })),
      containers: regs.map((_, i) => ({ name: `c${i}`, image: "x" })),
      spec: { restartPolicy },
    });
    const st = regs.map((s, i) => cs(`c${i}`, s)).filter((x) => x !== undefined);
    const ist = inits.map((s, i) => cs(`i${i}`, s)).filter((x) => x !== undefined);
    expect(getPhase(pod, st, ist, terminal) as string).toBe(want);
  });
});

const rc = (o: Partial<RuntimeContainerStatus> & { name: string }): RuntimeContainerStatus => ({
  id: `id-${o.name}-${o.attempt ?? 0}`,
  image: "bunlet.local/busybox:1",
  imageRef: "sha256:abc",
  state: "running",
  createdAtMs: Date.UTC(2026, 0, 1) + (o.attempt ?? 0) * 1000,
  startedAtMs: Date.UTC(2026, 0, 1) + (o.attempt ?? 0) * 1000,
  finishedAtMs: 0,
  attempt: 0,
  ...o,
});
const rps = (containers: RuntimeContainerStatus[]): RuntimePodStatus => ({
  uid: "u",
  name: "p",
  namespace: "default",
  sandboxes: [{ id: "s1", attempt: 0, state: "ready", createdAtMs: 0, ip: "10.88.0.5" }],
  containers,
});

describe("generatePodStatus", () => {
  const pod = makePod({ name: "p", containers: [{ name: "app", image: "bunlet.local/busybox:1", resources: { limits: { memory: "64Mi", cpu: "100m" } } }] });
  const now = Date.UTC(2026, 0, 1, 0, 1);

  test("running container: Running, Ready, containerd:// id, IPs, QoS", () => {
    const s = generatePodStatus({ pod, runtime: rps([rc({ name: "app" })]), nowMs: now, hostIP: "192.168.1.2" });
    expect(s.phase).toBe("Running");
    expect(s.podIP).toBe("10.88.0.5");
    expect(s.hostIP).toBe("192.168.1.2");
    expect(s.qosClass).toBe("Guaranteed");
    expect(s.startTime).toBe("2026-01-01T00:01:00Z");
    const c = s.containerStatuses![0]!;
    expect(c).toMatchObject({ name: "app", ready: true, started: true, restartCount: 0, containerID: "containerd://id-app-0", imageID: "sha256:abc" });
    expect(c.state.running?.startedAt).toBe("2026-01-01T00:00:00Z");
    expect(s.conditions!.map((x) => `${x.type}=${x.status}`)).toEqual(["Initialized=True", "Ready=True", "ContainersReady=True", "PodScheduled=True"]);
  });

  test("readiness false → not Ready with the container named", () => {
    const s = generatePodStatus({ pod, runtime: rps([rc({ name: "app" })]), nowMs: now, ready: () => false });
    const ready = s.conditions!.find((c) => c.type === "Ready")!;
    expect(ready).toMatchObject({ status: "False", reason: "ContainersNotReady", message: "containers with unready status: [app]" });
  });

  test("OOMKilled then CrashLoopBackOff: waiting reason, lastState, restartCount", () => {
    const runtime = rps([
      rc({ name: "app", attempt: 2, state: "exited", exitCode: 137, reason: "OOMKilled", finishedAtMs: now }),
      rc({ name: "app", attempt: 1, state: "exited", exitCode: 1, finishedAtMs: now - 5000 }),
    ]);
    const s = generatePodStatus({
      pod,
      runtime,
      nowMs: now,
      syncErrors: [{ container: "app", reason: "CrashLoopBackOff", message: "back-off 20s restarting failed container=app" }],
    });
    const c = s.containerStatuses![0]!;
    expect(c.state.waiting).toEqual({ reason: "CrashLoopBackOff", message: "back-off 20s restarting failed container=app" });
    expect(c.lastState.terminated).toMatchObject({ exitCode: 137, reason: "OOMKilled" });
    expect(c.restartCount).toBe(2);
    expect(s.phase).toBe("Running");
  });

  test.each([
    [0, undefined, "Completed"],
    [1, undefined, "Error"],
    [137, "OOMKilled", "OOMKilled"],
  ])("exit %d reason %p → %s", (exitCode, reason, want) => {
    const p = makePod({ name: "p", spec: { restartPolicy: "Never" } });
    const s = generatePodStatus({ pod: p, runtime: rps([rc({ name: "app", state: "exited", exitCode, reason })]), nowMs: now });
    expect(s.containerStatuses![0]!.state.terminated?.reason).toBe(want);
    expect(s.phase).toBe(exitCode === 0 ? "Succeeded" : "Failed");
  });

  test("no containers yet: Pending, ContainerCreating; transition times kept while unchanged", () => {
    const s1 = generatePodStatus({ pod, runtime: { ...rps([]), sandboxes: [] }, nowMs: now });
    expect(s1.phase).toBe("Pending");
    expect(s1.containerStatuses![0]!.state.waiting?.reason).toBe("ContainerCreating");
    const s2 = generatePodStatus({ pod, runtime: { ...rps([]), sandboxes: [] }, nowMs: now + 5000, oldStatus: s1 });
    expect(s2.conditions).toEqual(s1.conditions!);
    expect(s2.startTime).toBe(s1.startTime!);
    const s3 = generatePodStatus({ pod, runtime: rps([rc({ name: "app" })]), nowMs: now + 9000, oldStatus: s2 });
    expect(s3.conditions!.find((c) => c.type === "Ready")!.lastTransitionTime).toBe("2026-01-01T00:01:09Z");
  });

  test("a terminal (evicted) status is final", () => {
    const evicted = terminalStatus(undefined, "Evicted", "The node was low on resource: memory.", now, true);
    const s = generatePodStatus({ pod, runtime: rps([rc({ name: "app", state: "exited", exitCode: 137 })]), nowMs: now, oldStatus: evicted });
    expect(s).toMatchObject({ phase: "Failed", reason: "Evicted", message: "The node was low on resource: memory." });
    expect(s.conditions![0]).toMatchObject({ type: "DisruptionTarget", status: "True", reason: "TerminationByKubelet" });
    expect(s.conditions!.find((c) => c.type === "Ready")).toMatchObject({ status: "False", reason: "PodFailed" });
  });

  test("ephemeral containers: their own statuses, never ready, no started; the pod's conditions ignore them", () => {
    const p = makePod({
      name: "p",
      spec: {
        ephemeralContainers: [
          { name: "debugger", image: "bunlet.local/busybox:1" },
          { name: "later", image: "x" },
        ],
      },
    });
    const s = generatePodStatus({ pod: p, runtime: rps([rc({ name: "app" }), rc({ name: "debugger" })]), nowMs: now });
    expect(s.ephemeralContainerStatuses).toEqual([
      {
        name: "debugger",
        state: { running: { startedAt: "2026-01-01T00:00:00Z" } },
        lastState: {},
        ready: false,
        restartCount: 0,
        image: "bunlet.local/busybox:1",
        imageID: "sha256:abc",
        containerID: "containerd://id-debugger-0",
      },
      { name: "later", state: { waiting: { reason: "ContainerCreating" } }, lastState: {}, ready: false, restartCount: 0, image: "x", imageID: "" },
    ]);
    expect(s.containerStatuses!.map((c) => c.name)).toEqual(["app"]);
    expect(s.conditions!.find((c) => c.type === "Ready")!.status).toBe("True");
    expect(generatePodStatus({ pod, runtime: rps([rc({ name: "app" })]), nowMs: now }).ephemeralContainerStatuses).toBeUndefined();
  });

  test("hostNetwork pods get the host IP as pod IP", () => {
    const p = makePod({ name: "p", spec: { hostNetwork: true } });
    const s = generatePodStatus({ pod: p, runtime: rps([rc({ name: "app" })]), nowMs: now, hostIP: "192.168.1.2" });
    expect(s.podIP).toBe("192.168.1.2");
  });
});

describe("generatePodStatus: init containers (upstream convertToAPIContainerStatuses, GeneratePodInitializedCondition)", () => {
  const now = Date.UTC(2026, 0, 1, 0, 1);
  const pod = (restartPolicy: "Always" | "Never") =>
    makePod({
      name: "p",
      initContainers: [
        { name: "init1", image: "x" },
        { name: "init2", image: "x" },
      ],
      containers: [{ name: "run1", image: "x" }],
      spec: { restartPolicy },
    });
  const byType = (s: ReturnType<typeof generatePodStatus>, type: string) => s.conditions!.find((c) => c.type === type);

  test("an init container not yet created waits with PodInitializing, as the app containers do", () => {
    const s = generatePodStatus({ pod: pod("Always"), runtime: rps([rc({ name: "init1", state: "exited", exitCode: 1 })]), nowMs: now });
    expect(s.initContainerStatuses!.map((c) => c.state)).toEqual([
      { terminated: expect.objectContaining({ exitCode: 1 }) },
      { waiting: { reason: "PodInitializing" } },
    ]);
    expect(s.containerStatuses![0]!.state).toEqual({ waiting: { reason: "PodInitializing" } });
  });

  test("a pod failed by its init container says which did not complete; Ready is PodFailed", () => {
    const runtime = rps([rc({ name: "init1", state: "exited", exitCode: 0 }), rc({ name: "init2", state: "exited", exitCode: 1 })]);
    const s = generatePodStatus({ pod: pod("Never"), runtime, nowMs: now });
    expect(s.phase).toBe("Failed");
    expect(byType(s, "Initialized")).toMatchObject({
      status: "False",
      reason: "ContainersNotInitialized",
      message: "containers with incomplete status: [init2]",
    });
    expect(byType(s, "Ready")).toMatchObject({ status: "False", reason: "PodFailed" });
    expect(byType(s, "ContainersReady")).toMatchObject({ status: "False", reason: "PodFailed" });
  });

  test("a Succeeded pod is initialized with reason PodCompleted", () => {
    const runtime = rps([
      rc({ name: "init1", state: "exited", exitCode: 0 }),
      rc({ name: "init2", state: "exited", exitCode: 0 }),
      rc({ name: "run1", state: "exited", exitCode: 0 }),
    ]);
    const s = generatePodStatus({ pod: pod("Never"), runtime, nowMs: now });
    expect(s.phase).toBe("Succeeded");
    expect(byType(s, "Initialized")).toMatchObject({ status: "True", reason: "PodCompleted" });
    expect(byType(s, "Ready")).toMatchObject({ status: "False", reason: "PodCompleted" });
  });
});

describe("withContainerReadiness (upstream statusManager.SetContainerReadiness)", () => {
  const now = Date.UTC(2026, 0, 1, 0, 1);
  const pod = makePod({
    name: "p",
    containers: [
      { name: "app", image: "x" },
      { name: "web", image: "x" },
    ],
  });
  const ready = generatePodStatus({ pod, runtime: rps([rc({ name: "app" }), rc({ name: "web" })]), nowMs: now });

  test("a container gone unready: its ready flag, Ready and ContainersReady at once", () => {
    const s = withContainerReadiness(pod, ready, "id-web-0", false, now + 5000);
    expect(s.containerStatuses!.map((c) => c.ready)).toEqual([true, false]);
    expect(s.conditions!.find((c) => c.type === "Ready")).toMatchObject({
      status: "False",
      reason: "ContainersNotReady",
      message: "containers with unready status: [web]",
      lastTransitionTime: "2026-01-01T00:01:05Z",
    });
    expect(s.conditions!.find((c) => c.type === "ContainersReady")).toMatchObject({ status: "False", reason: "ContainersNotReady" });
    expect(withContainerReadiness(pod, s, "containerd://id-web-0", true, now + 9000).conditions!.find((c) => c.type === "Ready")?.status).toBe("True");
  });

  test("no change, another container ID, or a container not running: the same status", () => {
    expect(withContainerReadiness(pod, ready, "id-web-0", true, now)).toBe(ready);
    expect(withContainerReadiness(pod, ready, "id-web-1", false, now)).toBe(ready);
    const exited = generatePodStatus({ pod, runtime: rps([rc({ name: "app" }), rc({ name: "web", state: "exited", exitCode: 0 })]), nowMs: now });
    expect(withContainerReadiness(pod, exited, "id-web-0", true, now)).toBe(exited);
  });
});

describe("generatePodStatus: readiness gates (upstream GeneratePodReadyCondition)", () => {
  const now = Date.UTC(2026, 0, 1, 0, 1);
  const gated = (conditions?: { type: string; status: "True" | "False" | "Unknown" }[]) => {
    const pod = makePod({ name: "p", spec: { readinessGates: [{ conditionType: "example.com/lb" }, { conditionType: "example.com/dns" }] } });
    const status = conditions && {
      phase: "Running" as const,
      conditions: conditions.map((c) => ({ ...c, lastProbeTime: null, lastTransitionTime: "2026-01-01T00:00:00Z" })),
    };
    return status ? { ...pod, status } : pod;
  };
  const ready = (pod: ReturnType<typeof gated>, containerReady = true) =>
    generatePodStatus({ pod, runtime: rps([rc({ name: "app" })]), nowMs: now, ready: () => containerReady }).conditions!.filter(
      (c) => c.type === "Ready" || c.type === "ContainersReady",
    );

  test.each([
    [
      "no condition yet",
      undefined,
      {
        status: "False",
        reason: "ReadinessGatesNotReady",
        message:
          'corresponding condition of pod readiness gate "example.com/lb" does not exist., corresponding condition of pod readiness gate "example.com/dns" does not exist.',
      },
    ],
    [
      "one False",
      [
        { type: "example.com/lb", status: "True" },
        { type: "example.com/dns", status: "False" },
      ],
      { status: "False", reason: "ReadinessGatesNotReady", message: 'the status of pod readiness gate "example.com/dns" is not "True", but False' },
    ],
    [
      "one Unknown, one missing",
      [{ type: "example.com/lb", status: "Unknown" }],
      {
        status: "False",
        reason: "ReadinessGatesNotReady",
        message:
          'the status of pod readiness gate "example.com/lb" is not "True", but Unknown, corresponding condition of pod readiness gate "example.com/dns" does not exist.',
      },
    ],
    [
      "all True",
      [
        { type: "example.com/lb", status: "True" },
        { type: "example.com/dns", status: "True" },
      ],
      { status: "True" },
    ],
  ] as const)("containers ready, %s: Ready as the gates say, ContainersReady True", (_n, conditions, want) => {
    const [r, cr] = ready(gated(conditions ? [...conditions] : undefined));
    expect(r).toMatchObject({ type: "Ready", ...want });
    if (want.status === "True") expect(r!.reason).toBeUndefined();
    expect(cr).toMatchObject({ type: "ContainersReady", status: "True" });
  });

  test("containers not ready: Ready says so, whatever the gates", () => {
    const [r] = ready(
      gated([
        { type: "example.com/lb", status: "True" },
        { type: "example.com/dns", status: "True" },
      ]),
      false,
    );
    expect(r).toMatchObject({ status: "False", reason: "ContainersNotReady", message: "containers with unready status: [app]" });
  });

  test("the gates' conditions are not written back: the status PATCH leaves them to whoever owns them", () => {
    const s = generatePodStatus({
      pod: gated([
        { type: "example.com/lb", status: "True" },
        { type: "example.com/dns", status: "True" },
      ]),
      runtime: rps([rc({ name: "app" })]),
      nowMs: now,
    });
    expect(s.conditions!.map((c) => c.type)).toEqual(["Initialized", "Ready", "ContainersReady", "PodScheduled"]);
  });
});

describe("getPhase with a sidecar (restartable init container)", () => {
  const started = (s: ContainerStatus | undefined, yes: boolean) => s && { ...s, started: yes };
  test.each<[string, S, boolean, S, "Always" | "Never", string]>([
    ["sidecar running, not started: Pending", "running", false, "none", "Always", "Pending"],
    ["sidecar started, main not yet: Pending", "running", true, "none", "Always", "Pending"],
    ["sidecar and main running", "running", true, "running", "Always", "Running"],
    ["main done under Never, sidecar still running: Running", "running", true, "ok", "Never", "Running"],
    ["main done under Never, sidecar stopped: Succeeded", "ok", false, "ok", "Never", "Succeeded"],
    ["main failed under Never, sidecar stopped: Failed", "fail", false, "fail", "Never", "Failed"],
  ])("%s", (_n, side, isStarted, main, restartPolicy, want) => {
    const pod = makePod({
      name: "p",
      initContainers: [{ name: "s", image: "x", restartPolicy: "Always" }],
      containers: [{ name: "c0", image: "x" }],
      spec: { restartPolicy },
    });
    const st = [cs("c0", main)].filter((x) => x !== undefined);
    const ist = [started(cs("s", side), isStarted)].filter((x) => x !== undefined);
    expect(getPhase(pod, st, ist, false) as string).toBe(want);
  });
});
