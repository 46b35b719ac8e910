// Lifecycle hook handlers (src/pod/lifecycle-hooks.ts) and the termination arithmetic around them
// (src/pod/kuberuntime/termination.ts): upstream's messages, grace accounting and sidecar ordering.
import { describe, expect, test } from "bun:test";
import { formatPod, type HookTarget, runLifecycleHandler } from "../../src/pod/lifecycle-hooks.ts";
import { createTerminationOrdering, runPreStopWithin, terminationGracePeriod } from "../../src/pod/kuberuntime/termination.ts";
import type { KubePod } from "../../src/pod/kuberuntime/types.ts";
import { createSettlingClock } from "../support/settling-clock.ts";

const target: HookTarget = {
  pod: { name: "web", namespace: "default", uid: "u1" },
  container: { name: "app", ports: [{ name: "http", containerPort: 8080 }] },
  containerId: "c1",
  podIP: "10.0.0.5",
};

describe("runLifecycleHandler", () => {
  const exec =
    (exitCode: number, stdout = "", stderr = "") =>
    async () => ({ exitCode, stdout, stderr });
  test.each([
    ["exec exit 0 succeeds", { exec: { command: ["true"] } }, exec(0), undefined],
    [
      "exec exit 3 fails with upstream's message",
      { exec: { command: ["sh", "-c", "exit 3"] } },
      exec(3, "out", "bad"),
      `Exec lifecycle hook ([sh -c exit 3]) for Container "app" in Pod "web_default(u1)" failed - error: command 'sh -c exit 3' exited with 3: bad, message: "outbad"`,
    ],
  ])("%s", async (_n, h, execSync, want) => {
    expect(await runLifecycleHandler(h, target, { execSync })).toBe(want);
  });

  test("exec runs with no hook timeout (0) in the container", async () => {
    const calls: unknown[] = [];
    await runLifecycleHandler({ exec: { command: ["touch", "/x"] } }, target, {
      execSync: async (...a) => (calls.push(a), { exitCode: 0, stdout: "", stderr: "" }),
    });
    expect(calls).toEqual([["c1", ["touch", "/x"], 0]]);
  });

  test.each([
    ["named port, pod IP", { path: "/hook", port: "http" }, "http://10.0.0.5:8080/hook"],
    ["host and scheme", { path: "x", port: 9443, host: "127.0.0.1", scheme: "HTTPS" }, "https://127.0.0.1:9443/x"],
    ["empty port string means 80", { port: "" }, "http://10.0.0.5:80/"],
  ])("httpGet %s", async (_n, httpGet, url) => {
    const seen: string[] = [];
    const fetch = (async (u: string, init: RequestInit) => {
      seen.push(u, new Headers(init.headers).get("user-agent") ?? "");
      return new Response("nope", { status: 500 }); // any response is a success, as upstream
    }) as unknown as typeof globalThis.fetch;
    expect(await runLifecycleHandler({ httpGet }, target, { execSync: exec(0), fetch })).toBeUndefined();
    expect(seen).toEqual([url, "kube-lifecycle/1.31"]);
  });

  test("httpGet transport error fails with upstream's message", async () => {
    const fetch = (async () => {
      throw new Error("connection refused");
    }) as unknown as typeof globalThis.fetch;
    expect(await runLifecycleHandler({ httpGet: { path: "/h", port: 1 } }, target, { execSync: exec(0), fetch })).toBe(
      `HTTP lifecycle hook (/h) for Container "app" in Pod "web_default(u1)" failed - error: Get "http://10.0.0.5:1/h": connection refused`,
    );
  });

  test("httpGet without a host nor a pod IP fails", async () => {
    expect(await runLifecycleHandler({ httpGet: { port: 80 } }, { ...target, podIP: undefined }, { execSync: exec(0) })).toContain(
      "failed to find networking container",
    );
  });

  test("sleep completes, or fails when aborted", async () => {
    expect(await runLifecycleHandler({ sleep: { seconds: 0 } }, target, { execSync: exec(0) })).toBeUndefined();
    const ac = new AbortController();
    const p = runLifecycleHandler({ sleep: { seconds: 30 } }, target, { execSync: exec(0) }, ac.signal);
    ac.abort();
    expect(await p).toBe(
      `Sleep lifecycle hook (30) for Container "app" in Pod "web_default(u1)" failed - error: container terminated before sleep hook finished`,
    );
  });

  test("formatPod is name_namespace(uid)", () => expect(formatPod(target.pod)).toBe("web_default(u1)"));
});

const pod = (over: Partial<KubePod["spec"]> = {}): KubePod =>
  ({ metadata: { name: "p", namespace: "d", uid: "u" }, spec: { terminationGracePeriodSeconds: 30, containers: [{ name: "app" }], ...over } }) as KubePod;

describe("terminationGracePeriod (upstream setTerminationGracePeriod)", () => {
  const c = { name: "app", livenessProbe: { terminationGracePeriodSeconds: 5 }, startupProbe: { terminationGracePeriodSeconds: 7 } };
  test.each([
    ["pod default", {}, undefined, "unknown", 30],
    ["pod's own", { terminationGracePeriodSeconds: 12 }, c, "unknown", 12],
    ["liveness probe's", {}, c, "liveness", 5],
    ["startup probe's", {}, c, "startup", 7],
    ["liveness without probe-level", {}, { name: "app" }, "liveness", 30],
    ["postStart uses the pod's", {}, c, "postStart", 30],
  ] as const)("%s", (_n, spec, container, reason, want) => {
    expect(terminationGracePeriod(pod(spec as Partial<KubePod["spec"]>), container, reason)).toBe(want);
  });
});

describe("runPreStopWithin", () => {
  test("a hook taking 3.7 s leaves grace − 3", async () => {
    const clock = createSettlingClock();
    const p = runPreStopWithin(10, clock, () => new Promise<void>((r) => clock.setTimeout(r, 3_700)));
    await clock.advance(3_700);
    expect(await p).toEqual({ remainingSeconds: 7, completed: true });
  });

  test("a hook outlasting the grace period is abandoned (aborted) at its end", async () => {
    const clock = createSettlingClock();
    let aborted = false;
    const p = runPreStopWithin(2, clock, (signal) => new Promise<void>(() => signal.addEventListener("abort", () => (aborted = true))));
    await clock.advance(2_000);
    expect(await p).toEqual({ remainingSeconds: 0, completed: false });
    expect(aborted).toBe(true);
  });

  test("a failing hook still counts as done", async () => {
    const clock = createSettlingClock();
    expect(await runPreStopWithin(5, clock, async () => Promise.reject(new Error("x")))).toEqual({ remainingSeconds: 5, completed: true });
  });
});

describe("termination ordering (sidecars stop last, in reverse order)", () => {
  const sidecarPod = pod({
    containers: [{ name: "app" }, { name: "app2" }],
    initContainers: [{ name: "init" }, { name: "s1", restartPolicy: "Always" }, { name: "s2", restartPolicy: "Always" }],
  });

  test("regular containers go at once; s2 waits for them, s1 for s2 too", async () => {
    const clock = createSettlingClock();
    const o = createTerminationOrdering(sidecarPod, ["app", "app2", "s1", "s2"], clock);
    const order: string[] = [];
    expect(await o.waitForTurn("app", 30)).toBe(0);
    const s1 = o.waitForTurn("s1", 30).then(() => order.push("s1"));
    const s2 = o.waitForTurn("s2", 30).then(() => order.push("s2"));
    await clock.advance(1_000);
    o.containerTerminated("app");
    await clock.advance(1_000);
    expect(order).toEqual([]);
    o.containerTerminated("app2");
    await clock.advance(0);
    expect(order).toEqual(["s2"]);
    o.containerTerminated("s2");
    await Promise.all([s1, s2]);
    expect(order).toEqual(["s2", "s1"]);
  });

  test("a sidecar waits at most the grace period left", async () => {
    const clock = createSettlingClock();
    const o = createTerminationOrdering(sidecarPod, ["app", "s1"], clock);
    const waited = o.waitForTurn("s1", 3);
    await clock.advance(3_000);
    expect(await waited).toBe(3);
  });

  test("only running containers are waited for", async () => {
    const clock = createSettlingClock();
    const o = createTerminationOrdering(sidecarPod, ["s1"], clock);
    expect(await o.waitForTurn("s1", 30)).toBe(0);
  });
});
