import { describe, expect, test } from "bun:test";
import { createProbeManager } from "../../src/pod/prober/manager.ts";
import { runProbe } from "../../src/pod/prober/probes.ts";
import { GrpcCode, GrpcError } from "../../src/cri/grpc.ts";
import { initialState, prepare, record, type ProbeKind, type ProbeResult } from "../../src/pod/prober/state.ts";
import type { Probe } from "../../src/pod/types.ts";
import { createSettlingClock } from "../support/settling-clock.ts";
import { makePod } from "./fake-runtime.ts";

const spec = { initialDelaySeconds: 0, successThreshold: 1, failureThreshold: 3 };

/** Pod "p" (uid "u") whose one container "app" has these probes; extra init containers when given. */
const probedPod = (probes: Record<string, unknown>, initContainers?: Record<string, unknown>[]) =>
  makePod({ name: "p", uid: "u", containers: [{ name: "app", image: "x", ...probes }], initContainers });
/** The kind of probe an exec command names in these tests: s(tartup), l(iveness), r(eadiness). */
const kindOf = (p: Probe) => (p.exec!.command[0]!.startsWith("s") ? "startup" : p.exec!.command[0]!.startsWith("l") ? "liveness" : "readiness");

describe("probe state machine", () => {
  test.each<[ProbeKind, ProbeResult]>([
    ["readiness", "failure"],
    ["liveness", "success"],
    ["startup", "unknown"],
  ])("%s starts as %s", (kind, want) => expect(initialState(kind).published).toBe(want));

  test.each<[string, ProbeKind, typeof spec, ProbeResult[], ProbeResult[]]>([
    ["liveness publishes failure at the 3rd failure", "liveness", spec, ["failure", "failure", "failure"], ["success", "success", "failure"]],
    [
      "a success in between resets the failure run",
      "liveness",
      spec,
      ["failure", "failure", "success", "failure", "failure"],
      ["success", "success", "success", "success", "success"],
    ],
    [
      "readiness needs successThreshold=2 successes",
      "readiness",
      { ...spec, successThreshold: 2 },
      ["success", "success", "failure"],
      ["failure", "success", "success"],
    ],
    ["readiness failureThreshold=1", "readiness", { ...spec, failureThreshold: 1 }, ["success", "failure", "success"], ["success", "failure", "success"]],
  ])("%s", (_n, kind, s, results, published) => {
    let st = prepare(kind, s, initialState(kind), { id: "c1", running: true, startedAtMs: 0, started: true }, 0).state;
    const seen: ProbeResult[] = [];
    for (const r of results) {
      st = record(kind, s, st, r);
      seen.push(st.published);
    }
    expect(seen).toEqual(published);
  });

  test("liveness holds after a failure until the container is replaced", () => {
    let st = prepare(
      "liveness",
      { ...spec, failureThreshold: 1 },
      initialState("liveness"),
      { id: "c1", running: true, startedAtMs: 0, started: true },
      0,
    ).state;
    st = record("liveness", { ...spec, failureThreshold: 1 }, st, "failure");
    expect(st).toMatchObject({ published: "failure", onHold: true });
    expect(prepare("liveness", spec, st, { id: "c1", running: true, startedAtMs: 0, started: true }, 0).probe).toBe(false);
    const fresh = prepare("liveness", spec, st, { id: "c2", running: true, startedAtMs: 0, started: true }, 0);
    expect(fresh.probe).toBe(true);
    expect(fresh.state).toMatchObject({ containerId: "c2", published: "success", onHold: false });
  });

  test.each<[string, ProbeKind, Partial<{ running: boolean; started: boolean; startedAtMs: number }>, number, boolean]>([
    ["initial delay not reached", "liveness", { startedAtMs: 0 }, 4_999, false],
    ["initial delay reached", "liveness", { startedAtMs: 0 }, 5_000, true],
    ["not started: liveness waits for startup", "liveness", { started: false }, 10_000, false],
    ["not started: readiness waits for startup", "readiness", { started: false }, 10_000, false],
    ["not started: startup probes", "startup", { started: false }, 10_000, true],
    ["not running", "readiness", { running: false }, 10_000, false],
  ])("prepare: %s", (_n, kind, view, now, want) => {
    const r = prepare(kind, { ...spec, initialDelaySeconds: 5 }, initialState(kind), { id: "c", running: true, startedAtMs: 0, started: true, ...view }, now);
    expect(r.probe).toBe(want);
  });
});

function probe(p: Partial<Probe>): Probe {
  return { initialDelaySeconds: 0, periodSeconds: 10, timeoutSeconds: 1, successThreshold: 1, failureThreshold: 3, ...p } as Probe;
}

describe("probe handlers", () => {
  const container = makePod({ name: "p", containers: [{ name: "app", image: "x", ports: [{ name: "http", containerPort: 1 }] }] }).spec.containers[0]!;

  test("httpGet: 2xx/3xx success, 5xx failure, headers sent, named port", async () => {
    let status = 200;
    let header = "";
    const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (req) => ((header = req.headers.get("x-probe") ?? ""), new Response("ok", { status })) });
    try {
      const c = { ...container, ports: [{ name: "http", containerPort: server.port!, protocol: "TCP" as const }] };
      const p = probe({ httpGet: { path: "/healthz", port: "http", scheme: "HTTP", httpHeaders: [{ name: "X-Probe", value: "1" }] } });
      expect((await runProbe(p, { container: c, containerId: "c", podIP: "127.0.0.1" }, {})).result).toBe("success");
      expect(header).toBe("1");
      status = 302;
      expect((await runProbe(p, { container: c, containerId: "c", podIP: "127.0.0.1" }, {})).result).toBe("success");
      status = 503;
      const r = await runProbe(p, { container: c, containerId: "c", podIP: "127.0.0.1" }, {});
      expect(r).toEqual({ result: "failure", output: "HTTP probe failed with statuscode: 503" });
    } finally {
      server.stop(true);
    }
  });

  test("tcpSocket: connect succeeds on a listening port, fails on a closed one", async () => {
    const server = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    const port = server.port;
    try {
      expect((await runProbe(probe({ tcpSocket: { port } }), { container, containerId: "c", podIP: "127.0.0.1" }, {})).result).toBe("success");
    } finally {
      server.stop(true);
    }
    expect((await runProbe(probe({ tcpSocket: { port } }), { container, containerId: "c", podIP: "127.0.0.1" }, {})).result).toBe("failure");
  });

  test("exec: exit code decides; an ExecSync error (timeout) is a failure", async () => {
    const p = probe({ exec: { command: ["cat", "/tmp/healthy"] } });
    const ok = await runProbe(p, { container, containerId: "c" }, { execSync: async () => ({ exitCode: 0, stdout: "", stderr: "" }) });
    const bad = await runProbe(p, { container, containerId: "c" }, { execSync: async () => ({ exitCode: 1, stdout: "", stderr: "no such file" }) });
    const slow = await runProbe(
      p,
      { container, containerId: "c" },
      {
        execSync: async () => {
          throw new Error("timeout 1s exceeded");
        },
      },
    );
    expect([ok.result, bad.result, slow.result]).toEqual(["success", "failure", "failure"]);
    expect(bad.output).toBe("no such file");
  });
});

describe("probe manager", () => {
  test("startup gates liveness; liveness failure marks the container unhealthy once; readiness result reported", async () => {
    const clock = createSettlingClock();
    const results: Record<string, ProbeResult> = { startup: "failure", liveness: "success", readiness: "success" };
    const ran: string[] = [];
    const changes: string[] = [];
    const pod = probedPod({
      startupProbe: { exec: { command: ["s"] }, periodSeconds: 1, failureThreshold: 30 },
      livenessProbe: { exec: { command: ["l"] }, periodSeconds: 5, failureThreshold: 2 },
      readinessProbe: { exec: { command: ["r"] }, periodSeconds: 5 },
    });
    const m = createProbeManager({
      clock,
      runner: async (p) => {
        ran.push(kindOf(p));
        return { result: results[kindOf(p)]!, output: "" };
      },
      onChange: (_uid, kind, c, r) => changes.push(`${kind} ${c} ${r}`),
    });
    m.addPod(pod);
    m.updateContainer("u", "app", { id: "c1", running: true, startedAtMs: clock.now(), started: false });
    await clock.advance(3000);
    expect(new Set(ran)).toEqual(new Set(["startup"]));
    expect(m.isStarted("u", "app")).toBe(false);
    expect(m.isReady("u", "app")).toBe(false);
    results.startup = "success";
    await clock.advance(1000);
    expect(m.isStarted("u", "app")).toBe(true);
    await clock.advance(5000);
    expect(ran).toContain("liveness");
    expect(m.isReady("u", "app")).toBe(true);
    expect(m.unhealthy("u")).toEqual([]);
    results.liveness = "failure";
    await clock.advance(10_000);
    expect(m.unhealthy("u")).toEqual([{ container: "app", message: "Container app failed liveness probe, will be restarted", probe: "liveness" }]);
    expect(changes).toContain("liveness app failure");
    // The restarted container (new id) starts from scratch.
    results.liveness = "success";
    m.updateContainer("u", "app", { id: "c2", running: true, startedAtMs: clock.now(), started: false });
    expect(m.unhealthy("u")).toEqual([]);
    m.removePod("u");
    expect(m.pods()).toEqual([]);
  });

  test("after stop() no pod is probed, even one a late sync adds", async () => {
    const clock = createSettlingClock();
    const ran: string[] = [];
    const m = createProbeManager({
      clock,
      runner: async (p) => (ran.push(kindOf(p)), { result: "success", output: "" }),
      onChange: () => {},
    });
    const pod = probedPod({ readinessProbe: { exec: { command: ["r"] }, periodSeconds: 1 } });
    m.addPod(pod);
    m.stop();
    m.addPod(pod);
    m.updateContainer("u", "app", { id: "c1", running: true, startedAtMs: clock.now(), started: true });
    await clock.advance(3000);
    expect(m.pods()).toEqual([]);
    expect(ran).toEqual([]);
  });
});

describe("probe results when the runtime errs", () => {
  const container = makePod({ name: "p", containers: [{ name: "app", image: "x" }] }).spec.containers[0]!;
  test("runProbe: a runtime error is marked errored; a DeadlineExceeded is a failure", async () => {
    const p = probe({ exec: { command: ["true"] } });
    const down = await runProbe(
      p,
      { container, containerId: "c" },
      {
        execSync: async () => {
          throw new GrpcError("/runtime.v1.RuntimeService/ExecSync", GrpcCode.UNAVAILABLE, "connection closed before a reply");
        },
      },
    );
    const late = await runProbe(
      p,
      { container, containerId: "c" },
      {
        execSync: async () => {
          throw new GrpcError("/runtime.v1.RuntimeService/ExecSync", GrpcCode.DEADLINE_EXCEEDED, "timeout 1s exceeded");
        },
      },
    );
    expect([down.result, down.errored]).toEqual(["unknown", true]);
    expect([late.result, late.errored]).toEqual(["failure", undefined]);
  });

  test("liveness: an exec probe whose CRI call fails (containerd down) is discarded, the container is not restarted", async () => {
    const clock = createSettlingClock();
    let runtimeUp = true;
    let exitCode = 0;
    const changes: string[] = [];
    const pod = probedPod({
      livenessProbe: { exec: { command: ["l"] }, periodSeconds: 1, failureThreshold: 2 },
      readinessProbe: { exec: { command: ["r"] }, periodSeconds: 1, failureThreshold: 2 },
    });
    const m = createProbeManager({
      clock,
      execSync: async () => {
        if (!runtimeUp) throw new GrpcError("/runtime.v1.RuntimeService/ExecSync", GrpcCode.UNAVAILABLE, "connection closed before a reply");
        return { exitCode, stdout: "", stderr: "" };
      },
      onChange: (_uid, kind, c, r) => changes.push(`${kind} ${c} ${r}`),
    });
    m.addPod(pod);
    m.updateContainer("u", "app", { id: "c1", running: true, startedAtMs: clock.now(), started: true });
    await clock.advance(2000);
    expect(m.isReady("u", "app")).toBe(true);
    runtimeUp = false;
    await clock.advance(10_000);
    // containerd back: the healthy container was neither killed nor marked unready.
    runtimeUp = true;
    await clock.advance(2000);
    expect(m.unhealthy("u")).toEqual([]);
    expect(m.isReady("u", "app")).toBe(true);
    expect(changes).toEqual(["readiness app success"]);
    // A real failure still counts.
    exitCode = 1;
    await clock.advance(3000);
    expect(m.unhealthy("u").map((u) => u.probe)).toEqual(["liveness"]);
    m.stop();
  });
});

describe("probe manager: readiness after startup, termination, warnings", () => {
  test("readiness is probed at once when the startup probe passes, not a readiness period later (upstream UpdatePodStatus)", async () => {
    const clock = createSettlingClock();
    const results: Record<string, ProbeResult> = { startup: "failure", readiness: "success" };
    const ran: string[] = [];
    const pod = probedPod({
      startupProbe: { exec: { command: ["s"] }, periodSeconds: 5, failureThreshold: 120 },
      readinessProbe: { exec: { command: ["r"] }, periodSeconds: 30 },
    });
    const view = { id: "c1", running: true, startedAtMs: clock.now(), started: false };
    const m = createProbeManager({
      clock,
      runner: async (p) => {
        ran.push(`${kindOf(p)}@${(clock.now() - view.startedAtMs) / 1000}`);
        return { result: results[kindOf(p)]!, output: "" };
      },
      // As the lifecycle does: a result change re-syncs the pod, whose status hands the container over again.
      onChange: () => m.updateContainer("u", "app", view),
    });
    m.addPod(pod);
    m.updateContainer("u", "app", view);
    await clock.advance(31_000);
    expect(m.isReady("u", "app")).toBe(false);
    results.startup = "success";
    await clock.advance(4_000); // the startup probe at 35 s
    expect(m.isStarted("u", "app")).toBe(true);
    expect(m.isReady("u", "app")).toBe(true);
    expect(ran.filter((r) => r.startsWith("readiness"))).toEqual(["readiness@35"]);
    m.stop();
  });

  test("a terminating pod's liveness and startup probes stop; its readiness runs on until the pod is removed", async () => {
    const clock = createSettlingClock();
    const ran: string[] = [];
    const changes: string[] = [];
    const probe = (command: string) => ({ exec: { command: [command] }, periodSeconds: 1, failureThreshold: 1 });
    const pod = probedPod({ livenessProbe: probe("l"), readinessProbe: probe("r") }, [
      { name: "side", image: "x", restartPolicy: "Always", livenessProbe: probe("l") },
    ]);
    let failing = false;
    const m = createProbeManager({
      clock,
      runner: async (p, t) => {
        ran.push(`${t.container.name} ${kindOf(p)}`);
        return { result: failing ? "failure" : "success", output: "" };
      },
      onChange: (_uid, kind, c, r, id) => changes.push(`${kind} ${c} ${r} ${id}`),
    });
    m.addPod(pod);
    m.updateContainer("u", "app", { id: "c1", running: true, startedAtMs: clock.now(), started: false });
    m.updateContainer("u", "side", { id: "s1", running: true, startedAtMs: clock.now(), started: false });
    await clock.advance(1_500);
    m.stopLivenessAndStartup("u");
    failing = true;
    ran.length = 0;
    await clock.advance(2_000);
    // The sidecar's liveness runs on (upstream stops regular containers' only); the app's readiness fails.
    expect(new Set(ran)).toEqual(new Set(["app readiness", "side liveness"]));
    expect(m.unhealthy("u").map((u) => u.container)).toEqual(["side"]);
    expect(m.isReady("u", "app")).toBe(false);
    expect(changes).toContain("readiness app failure c1");
    m.removePod("u");
    ran.length = 0;
    await clock.advance(5_000);
    expect(ran).toEqual([]);
  });

  test("a success with a warning is a ProbeWarning event; a failure an Unhealthy one", async () => {
    const clock = createSettlingClock();
    const events: string[] = [];
    const pod = probedPod({ livenessProbe: { exec: { command: ["l"] }, periodSeconds: 1, failureThreshold: 2 } });
    const outcomes = [
      { result: "success" as const, output: "Probe terminated redirects, Response body: moved", warning: true },
      { result: "failure" as const, output: "HTTP probe failed with statuscode: 500" },
    ];
    const m = createProbeManager({
      clock,
      runner: async () => outcomes.shift() ?? { result: "success", output: "" },
      onChange: () => undefined,
      events: { event: (ref, type, reason, message) => events.push(`${type} ${reason} ${ref.kind}/${ref.name} ${ref.fieldPath}: ${message}`) },
    });
    m.addPod(pod);
    m.updateContainer("u", "app", { id: "c1", running: true, startedAtMs: clock.now(), started: false });
    await clock.advance(1_500);
    expect(events).toEqual([
      "Warning ProbeWarning Pod/p spec.containers{app}: Liveness probe warning: Probe terminated redirects, Response body: moved",
      "Warning Unhealthy Pod/p spec.containers{app}: Liveness probe failed: HTTP probe failed with statuscode: 500",
    ]);
    expect(m.unhealthy("u")).toEqual([]);
    m.stop();
  });
});
