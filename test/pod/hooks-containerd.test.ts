// machine test: root and a private containerd (test/support/containerd.ts)
// Lifecycle hooks and sidecars on a real containerd (private instance from test/support): a postStart
// hook's file is seen by the container, preStop runs before the stop signal, a failing postStart kills
// the container with PostStartHookError. Manifests are JSON (a YAML subset). Skipped when not root.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createKubeRuntime } from "../../src/pod/kuberuntime/manager.ts";
import { createPodLifecycle } from "../../src/pod/lifecycle.ts";
import type { PodLifecycle } from "../../src/pod/lifecycle-types.ts";
import type { Runtime } from "../../src/pod/runtime.ts";
import type { PodStatus } from "../../src/pod/types.ts";
import { acquireContainerd, canRunContainerd, removeNodePods, tearDownPods, type TestContainerd, testRuntimeCriName } from "../support/containerd.ts";
import { until } from "../support/wait.ts";

const PID = process.pid;
const BASE = `/tmp/bunlet-hooks-${PID}`;
const MANIFESTS = join(BASE, "manifests");
const SHARED = join(BASE, "shared");
const NODE = "hooknode";
const IMAGE = "bunlet.local/busybox:1";

function podJson(name: string, spec: Record<string, unknown>): string {
  return JSON.stringify({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name },
    spec: { hostNetwork: true, terminationGracePeriodSeconds: 10, volumes: [{ name: "shared", hostPath: { path: SHARED } }], ...spec },
  });
}
const sh = (script: string) => ["sh", "-c", script];
const mount = [{ name: "shared", mountPath: "/shared" }];

describe.skipIf(!canRunContainerd())("lifecycle hooks and sidecars on containerd", () => {
  let ctd: TestContainerd;
  let rt: Runtime;
  let lc: PodLifecycle;
  const newLifecycle = () =>
    createPodLifecycle({
      runtime: rt,
      config: {
        nodeName: NODE,
        hostIP: "127.0.0.1",
        staticPodPath: MANIFESTS,
        fileCheckFrequencyMs: 500,
        syncFrequencyMs: 60_000,
        errorRetryMs: 1_000,
        housekeepingPeriodMs: 500,
      },
    });
  const status = (name: string): PodStatus | undefined => lc.listPodsForApi().find((p) => p.metadata.name === `${name}-${NODE}`)?.status;
  const log = (f: string) => (existsSync(join(SHARED, f)) ? readFileSync(join(SHARED, f), "utf8").trim().split("\n") : []);

  beforeAll(async () => {
    ctd = await acquireContainerd();
    mkdirSync(MANIFESTS, { recursive: true });
    mkdirSync(SHARED, { recursive: true });
    // hostNetwork pods' httpGet hooks go to the node IP: loopback here.
    rt = createKubeRuntime({ cri: ctd.cri, podLogsDir: join(BASE, "logs"), rootDir: join(BASE, "root"), hostIP: "127.0.0.1" });
    lc = newLifecycle();
    await lc.start();
  }, 600_000);

  afterAll(async () => {
    await lc?.stop();
    await tearDownPods(ctd, () => removeNodePods(rt, NODE), `/bunlet-hooks-unused-${PID}`, BASE);
  }, 120_000);

  test("postStart writes a file the container sees; preStop runs before SIGTERM", async () => {
    const main = {
      name: "main",
      image: IMAGE,
      command: sh(
        "trap 'echo term >> /shared/hooks.log; exit 0' TERM; while [ ! -f /tmp/poststart ]; do sleep 0.1; done; " +
          "echo saw-$(cat /tmp/poststart) >> /shared/hooks.log; while true; do sleep 0.1; done",
      ),
      volumeMounts: mount,
      lifecycle: {
        postStart: { exec: { command: sh("echo hello > /tmp/poststart") } },
        preStop: { exec: { command: sh("echo prestop >> /shared/hooks.log") } },
      },
    };
    writeFileSync(join(MANIFESTS, "hooks.json"), podJson("hooks", { containers: [main] }));
    await until("container saw the postStart file", () => log("hooks.log").includes("saw-hello") || undefined);
    await until("Running", () => status("hooks")?.phase === "Running" || undefined);
    unlinkSync(join(MANIFESTS, "hooks.json"));
    await until("pod gone", () => !status("hooks") || undefined);
    await until("stopped", () => log("hooks.log").includes("term") || undefined, 20_000);
    expect(log("hooks.log")).toEqual(["saw-hello", "prestop", "term"]);
  }, 120_000);

  test("a failing postStart hook kills the container: PostStartHookError, then restarted", async () => {
    const main = {
      name: "main",
      image: IMAGE,
      command: sh("echo started >> /shared/fail.log; exec sleep 3600"),
      volumeMounts: mount,
      lifecycle: { postStart: { exec: { command: sh("echo oops; exit 7") } } },
    };
    writeFileSync(join(MANIFESTS, "fail.json"), podJson("fail", { terminationGracePeriodSeconds: 2, containers: [main] }));
    const waiting = await until(
      "PostStartHookError",
      () => {
        const w = status("fail")?.containerStatuses?.[0]?.state.waiting;
        return w?.reason === "PostStartHookError" ? w : undefined;
      },
      60_000,
      { intervalMs: 20 },
    );
    expect(waiting.message).toStartWith(`Exec lifecycle hook ([sh -c echo oops; exit 7]) for Container "main" in Pod "fail-${NODE}_`);
    expect(waiting.message).toContain(`exited with 7`);
    const s = await until("restarted", () => {
      const c = status("fail")?.containerStatuses?.[0];
      return (c?.restartCount ?? 0) >= 1 ? c : undefined;
    });
    expect(s.lastState.terminated).toBeDefined();
    unlinkSync(join(MANIFESTS, "fail.json"));
    await until("pod gone", () => !status("fail") || undefined);
  }, 120_000);

  test("a sidecar starts in order, gates init2 on its startup probe, is restarted when it exits, and stops last", async () => {
    const say = (what: string) => `echo ${what} >> /shared/side.log`;
    const trap = (name: string) => `trap '${say(`${name}-term`)}; exit 0' TERM`;
    const loop = "while true; do sleep 0.1; done";
    const spec = {
      initContainers: [
        { name: "init1", image: IMAGE, command: sh(say("init1")), volumeMounts: mount },
        {
          name: "side",
          image: IMAGE,
          restartPolicy: "Always",
          command: sh(`${trap("side")}; ${say("side-start")}; sleep 1; touch /tmp/started; ${loop}`),
          volumeMounts: mount,
          startupProbe: { exec: { command: ["test", "-f", "/tmp/started"] }, periodSeconds: 1, failureThreshold: 30 },
        },
        { name: "init2", image: IMAGE, command: sh(say("init2")), volumeMounts: mount },
      ],
      containers: [{ name: "main", image: IMAGE, command: sh(`${trap("main")}; ${say("main-start")}; ${loop}`), volumeMounts: mount }],
    };
    writeFileSync(join(MANIFESTS, "side.json"), podJson("side", spec));
    const s = await until("side pod Ready", () => {
      const st = status("side");
      return st?.conditions?.find((c) => c.type === "Ready")?.status === "True" ? st : undefined;
    });
    expect(log("side.log")).toEqual(["init1", "side-start", "init2", "main-start"]);
    expect(s.phase).toBe("Running");
    // The sidecar outlived init2 and runs beside main.
    const sideStatus = s.initContainerStatuses!.find((c) => c.name === "side")!;
    expect(sideStatus).toMatchObject({ ready: true, started: true, restartCount: 0 });
    expect(sideStatus.state.running).toBeDefined();
    expect(s.initContainerStatuses!.find((c) => c.name === "init2")!.state.terminated?.exitCode).toBe(0);

    // It exits: it is restarted (main keeps running).
    await rt.execSync!(sideStatus.containerID!.replace(`${testRuntimeCriName}://`, ""), ["kill", "-TERM", "1"], 5_000);
    await until("sidecar restarted", () => {
      const c = status("side")?.initContainerStatuses?.find((x) => x.name === "side");
      return c && c.restartCount >= 1 && c.state.running ? c : undefined;
    });
    expect(status("side")!.containerStatuses![0]!.restartCount).toBe(0);

    unlinkSync(join(MANIFESTS, "side.json"));
    await until("pod gone", () => !status("side") || undefined, 60_000);
    await until("both stopped", () => log("side.log").filter((l) => l.endsWith("-term")).length >= 3 || undefined, 20_000);
    expect(log("side.log").slice(-2)).toEqual(["main-term", "side-term"]);
  }, 120_000);

  test("an orphan (manifest removed while bunlet was down) still runs its preStop hook, restored from the container's annotations", async () => {
    const main = {
      name: "main",
      image: IMAGE,
      command: sh("trap 'echo term >> /shared/orphan.log; exit 0' TERM; echo up >> /shared/orphan.log; while true; do sleep 0.1; done"),
      volumeMounts: mount,
      lifecycle: { preStop: { exec: { command: sh("echo prestop >> /shared/orphan.log") } } },
    };
    writeFileSync(join(MANIFESTS, "orphan.json"), podJson("orphan", { containers: [main] }));
    await until("orphan up", () => log("orphan.log").includes("up") || undefined);
    await lc.stop();
    unlinkSync(join(MANIFESTS, "orphan.json"));
    lc = newLifecycle();
    await lc.start();
    await until("orphan stopped", () => log("orphan.log").includes("term") || undefined, 30_000);
    expect(log("orphan.log")).toEqual(["up", "prestop", "term"]);
  }, 120_000);

  test("httpGet postStart reaches the node (hostNetwork) with its headers; a sleep preStop delays the stop signal", async () => {
    const hits: string[] = [];
    const server = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: (req) => (hits.push(`${new URL(req.url).pathname} ${req.headers.get("x-hook")}`), new Response("ok")),
    });
    try {
      const main = {
        name: "main",
        image: IMAGE,
        command: sh("trap 'echo term >> /shared/http.log; exit 0' TERM; while true; do sleep 0.1; done"),
        volumeMounts: mount,
        lifecycle: {
          postStart: { httpGet: { path: "/started", port: server.port, httpHeaders: [{ name: "X-Hook", value: "yes" }] } },
          preStop: { sleep: { seconds: 2 } },
        },
      };
      writeFileSync(join(MANIFESTS, "http.json"), podJson("http", { containers: [main] }));
      await until("Running", () => status("http")?.phase === "Running" || undefined);
      expect(hits).toEqual(["/started yes"]);
      const t0 = Date.now();
      unlinkSync(join(MANIFESTS, "http.json"));
      await until("stopped", () => log("http.log").includes("term") || undefined, 30_000);
      // The stop signal came only after the 2 s sleep (a lower bound, not a speed assertion).
      expect(Date.now() - t0).toBeGreaterThanOrEqual(2_000);
    } finally {
      server.stop(true);
    }
  }, 120_000);
});
