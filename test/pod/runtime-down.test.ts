// containerd down for 65 s must not leave /healthz ok and /pods Running/Ready: the
// runtime check fails past upstream's 30 s grace, pods are served Ready=False, the syncloop check
// fails when the loop stalls, and everything recovers when the runtime answers again.
import { afterEach, describe, expect, test } from "bun:test";
import { createPodLifecycle } from "../../src/pod/lifecycle.ts";
import type { PodLifecycle } from "../../src/pod/lifecycle-types.ts";
import { healthz } from "../../src/server/endpoints.ts";
import { createSettlingClock, type SettlingClock } from "../support/settling-clock.ts";
import { createFakeRuntime, makePod } from "./fake-runtime.ts";

let lc: PodLifecycle | undefined;
afterEach(async () => {
  await lc?.stop();
  lc = undefined;
});

async function settle(clock: SettlingClock, ms = 0) {
  await clock.advance(ms);
  await lc!.whenIdle();
  await clock.advance(0);
  await lc!.whenIdle();
}

async function setup() {
  const clock = createSettlingClock();
  const rt = createFakeRuntime(clock.now);
  lc = createPodLifecycle({ runtime: rt, clock, config: { nodeName: "node1", hostIP: "192.168.1.10", syncFrequencyMs: 60_000, errorRetryMs: 10_000 } });
  await lc.start();
  lc.handleUpdate({ op: "SET", pods: [makePod({ name: "web", uid: "u1" })], source: "file" });
  await settle(clock, 2000);
  const route = healthz(lc.healthChecks());
  const health = async (verbose = false) => {
    const res = await route(new Request("http://x/healthz"), new URL(`http://x/healthz${verbose ? "?verbose" : ""}`));
    return { status: res.status, body: await res.text() };
  };
  const ready = () => {
    const s = lc!.listPodsForApi()[0]!.status!;
    return { ready: s.conditions!.find((c) => c.type === "Ready")!, container: s.containerStatuses![0]!.ready };
  };
  return { clock, rt, health, ready };
}

describe("runtime reachability: /healthz and pods' Ready", () => {
  test("containerd down for 65 s: healthz fails with the runtime check, pods Ready=False; back: ok and Ready again", async () => {
    const { clock, rt, health, ready } = await setup();
    expect(await health()).toEqual({ status: 200, body: "ok" });
    expect(ready().ready.status).toBe("True");
    const getPods = rt.getPods.bind(rt);
    rt.getPods = async () => {
      throw new Error("/runtime.v1.RuntimeService/ListPodSandbox: grpc code 14: connection closed before a reply");
    };
    await settle(clock, 20_000); // within the grace: still healthy, still ready
    expect((await health()).status).toBe(200);
    expect(ready().ready.status).toBe("True");
    await settle(clock, 45_000);
    const h = await health(true);
    expect(h.status).toBe(500);
    expect(h.body).toContain("[+]syncloop ok");
    expect(h.body).toMatch(/\[-\]runtime failed: container runtime is down: last seen active 1m\d+(\.\d+)?s ago; threshold is 30s/);
    expect(ready().ready).toMatchObject({ status: "False", reason: "NodeNotReady" });
    expect(ready().container).toBe(false);
    expect(lc!.getPodStatus("u1")!.conditions!.find((c) => c.type === "ContainersReady")!.status).toBe("False");
    rt.getPods = getPods;
    await settle(clock, 2000);
    expect(await health()).toEqual({ status: 200, body: "ok" });
    expect(ready().ready.status).toBe("True");
    expect(ready().container).toBe(true);
  });

  test("a stalled sync loop fails the syncloop check with upstream's message", async () => {
    const { clock, rt, health } = await setup();
    // Housekeeping (the loop's iteration) waits on a runtime call that never returns.
    rt.getPods = () => new Promise(() => {});
    await clock.advance(6 * 60_000);
    const h = await health(true);
    expect(h.status).toBe(500);
    expect(h.body).toContain("[-]syncloop failed: sync Loop took longer than 5m0s to finish");
    expect(h.body).toContain("[-]pleg failed: PLEG is not healthy: pleg was last seen active");
  });
});
