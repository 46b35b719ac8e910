// Bounds on what a container can make the kubelet wait for or read: probe and lifecycle-hook HTTP
// bodies are read at most 10 KiB (upstream pkg/probe/http maxRespBodyLength, lifecycle
// discardHTTPRespBody) and the stream is cancelled; a postStart hook that never returns fails once
// the pod's termination grace period has passed, and its container is killed; a preStop hook gets the grace
// period at most, the stop what is left of it (at least 2 s).
import { describe, expect, test } from "bun:test";
import { createContainerHooks } from "../../src/pod/kuberuntime/container-hooks.ts";
import type { KubePod } from "../../src/pod/kuberuntime/types.ts";
import { runLifecycleHandler } from "../../src/pod/lifecycle-hooks.ts";
import { runProbe } from "../../src/pod/prober/probes.ts";
import { MAX_RESP_BODY_LENGTH, readAtMost } from "../../src/pod/read-at-most.ts";
import type { Probe } from "../../src/pod/types.ts";
import { createSettlingClock } from "../support/settling-clock.ts";

/** A fetch answering with an endless body; `pulled()` is how many bytes the reader asked for. */
function endlessFetch() {
  let sent = 0;
  let cancelled = false;
  const chunk = new Uint8Array(4096).fill(0x61);
  const fetch = (async () =>
    new Response(
      new ReadableStream({
        pull(c) {
          sent += chunk.byteLength;
          c.enqueue(chunk);
        },
        cancel() {
          cancelled = true;
        },
      }),
    )) as unknown as typeof globalThis.fetch;
  return { fetch, sent: () => sent, cancelled: () => cancelled };
}

describe("HTTP bodies read at most 10 KiB", () => {
  test("readAtMost cuts and cancels; a short body is whole", async () => {
    const e = endlessFetch();
    const r = await readAtMost(await e.fetch("x"));
    expect(r.bytes.byteLength).toBe(MAX_RESP_BODY_LENGTH);
    expect(r.truncated).toBe(true);
    expect(e.cancelled()).toBe(true);
    expect(e.sent()).toBeLessThan(64 * 1024);
    expect(await readAtMost(new Response("ok"))).toEqual({ bytes: new Uint8Array(Buffer.from("ok")), truncated: false });
  });

  test("an httpGet probe answering an endless body succeeds with the first 10 KiB", async () => {
    const e = endlessFetch();
    const probe = { httpGet: { path: "/", port: 80, scheme: "HTTP" }, timeoutSeconds: 1 } as unknown as Probe;
    const r = await runProbe(probe, { container: { name: "c", image: "i" } as never, containerId: "id", podIP: "10.0.0.1" }, { fetch: e.fetch });
    expect(r.result).toBe("success");
    expect(r.output.length).toBe(MAX_RESP_BODY_LENGTH);
    expect(e.cancelled()).toBe(true);
  });

  test("an httpGet hook answering an endless body succeeds without reading it", async () => {
    const e = endlessFetch();
    const target = { pod: { name: "p", namespace: "d", uid: "u" }, container: { name: "c" }, containerId: "id", podIP: "10.0.0.1" };
    expect(
      await runLifecycleHandler({ httpGet: { port: 80 } }, target, { execSync: async () => ({ exitCode: 0, stdout: "", stderr: "" }), fetch: e.fetch }),
    ).toBeUndefined();
    expect(e.cancelled()).toBe(true);
    expect(e.sent()).toBeLessThan(64 * 1024);
  });
});

describe("postStart runs within the pod's termination grace period", () => {
  function setup(grace: number | undefined, exec: (timeoutSeconds: number) => Promise<never> | Promise<{ exitCode: number; stdout: string; stderr: string }>) {
    const clock = createSettlingClock();
    const stopped: string[] = [];
    const failed: string[] = [];
    const execTimeouts: number[] = [];
    const hooks = createContainerHooks({
      cri: { listPodSandbox: async () => [], podSandboxStatus: async () => ({}) } as never,
      clock,
      execSync: (_id, _cmd, t) => (execTimeouts.push(t), exec(t)),
      hookFailed: (_p, _c, reason, message) => failed.push(`${reason}: ${message}`),
      stopContainer: async (id) => void stopped.push(id),
    });
    const pod: KubePod = {
      metadata: { name: "p", namespace: "d", uid: "u" },
      spec: {
        ...(grace === undefined ? {} : { terminationGracePeriodSeconds: grace }),
        containers: [{ name: "c", image: "i", lifecycle: { postStart: { exec: { command: ["hang"] } } } }],
      },
    } as KubePod;
    const run = () => hooks.runPostStart(pod, { name: "p", namespace: "d", uid: "u" }, pod.spec.containers[0]!, "cid", "sid");
    return { clock, run, stopped, failed, execTimeouts };
  }

  test("an exec that never returns fails at the deadline and the container is killed", async () => {
    const s = setup(5, () => new Promise<never>(() => {}));
    const p = s.run();
    await s.clock.advance(4_000);
    let done = false;
    void p.then(() => (done = true));
    await s.clock.advance(0);
    expect(done).toBe(false);
    await s.clock.advance(1_000);
    expect(await p).toBe(`PostStartHook for Container "c" in Pod "p_d(u)" did not complete within the pod's termination grace period (5s)`);
    expect(s.execTimeouts).toEqual([5]);
    expect(s.stopped).toEqual(["cid"]);
    expect(s.failed[0]).toMatch(/^FailedPostStartHook: PostStartHook for Container "c"/);
  });

  test("a hook that finishes in time succeeds; the default grace period is 30 s", async () => {
    const s = setup(undefined, async () => ({ exitCode: 0, stdout: "", stderr: "" }));
    expect(await s.run()).toBeUndefined();
    expect(s.execTimeouts).toEqual([30]);
    expect(s.stopped).toEqual([]);
  });
});

describe("preStop runs within the grace period (upstream executePreStopHook)", () => {
  function setup(preStop: NonNullable<NonNullable<KubePod["spec"]["containers"][number]["lifecycle"]>["preStop"]>, exitCode = 0) {
    const clock = createSettlingClock();
    const stops: string[] = [];
    const failed: string[] = [];
    const hooks = createContainerHooks({
      cri: { listPodSandbox: async () => [], podSandboxStatus: async () => ({}) } as never,
      clock,
      execSync: async () => ({ exitCode, stdout: "", stderr: "no" }),
      hookFailed: (_p, _c, reason, message) => failed.push(`${reason}: ${message}`),
      stopContainer: async (id, _n, _r, grace) => void stops.push(`${id} grace=${grace}`),
    });
    const pod = { metadata: { name: "p", namespace: "d", uid: "u" }, spec: { containers: [{ name: "c", image: "i", lifecycle: { preStop } }] } } as KubePod;
    const kill = (grace: number) => hooks.killContainer(pod, { name: "p", namespace: "d", uid: "u" }, "cid", "c", grace, "Stopping pod");
    return { clock, kill, stops, failed };
  }

  test("a sleep longer than the grace period is cut at its end: the stop gets the minimum 2 s, no failed-hook event", async () => {
    const s = setup({ sleep: { seconds: 50 } });
    const p = s.kill(30);
    await s.clock.advance(29_000);
    expect(s.stops).toEqual([]);
    await s.clock.advance(1_000);
    await p;
    expect(s.stops).toEqual(["cid grace=2"]);
    expect(s.failed).toEqual([]);
  });

  test("a zero sleep stops at once with the whole grace period", async () => {
    const s = setup({ sleep: { seconds: 0 } });
    await s.kill(30);
    expect(s.stops).toEqual(["cid grace=30"]);
  });

  test("a failing exec hook is a FailedPreStopHook event; the stop follows", async () => {
    const s = setup({ exec: { command: ["false"] } }, 1);
    await s.kill(30);
    expect(s.failed).toEqual(["FailedPreStopHook: PreStopHook failed"]);
    expect(s.stops).toEqual(["cid grace=30"]);
  });
});
