import { describe, expect, test } from "bun:test";
import { containerEvents, createPleg, type PlegEvent } from "../../src/pod/pleg.ts";
import type { ContainerState } from "../../src/pod/runtime.ts";
import { createSettlingClock } from "../support/settling-clock.ts";
import { createFakeRuntime, makePod } from "./fake-runtime.ts";
import { createBackOff } from "../../src/pod/backoff.ts";

describe("PLEG", () => {
  test.each<[ContainerState | undefined, ContainerState | undefined, string[]]>([
    [undefined, "running", ["ContainerStarted"]],
    [undefined, "exited", ["ContainerDied"]],
    ["created", "running", ["ContainerStarted"]],
    ["running", "exited", ["ContainerDied"]],
    ["running", undefined, ["ContainerDied", "ContainerRemoved"]],
    ["exited", undefined, ["ContainerRemoved"]],
    ["running", "running", []],
    [undefined, "created", ["ContainerChanged"]],
  ])("%p → %p", (o, n, want) => {
    expect(containerEvents("u", "c", o, n).map((e): string => e.type)).toEqual(want);
  });

  test("relist against the runtime emits start, death and removal events on the 1 s period", async () => {
    const clock = createSettlingClock();
    const rt = createFakeRuntime(clock.now);
    const events: PlegEvent[] = [];
    const pleg = createPleg({ runtime: rt, clock, relistPeriodMs: 1000, onEvents: (e) => events.push(...e) });
    pleg.start();
    const pod = makePod({ name: "p", uid: "u1" });
    await rt.syncPod(pod, await rt.getPodStatus("u1", "p", "default"), createBackOff());
    await clock.advance(1000);
    expect(events.map((e) => `${e.podUid} ${e.type}`)).toEqual(["u1 ContainerStarted"]);
    rt.exit("u1", "app", 1);
    await clock.advance(999);
    expect(events).toHaveLength(1);
    await clock.advance(1);
    expect(events.map((e) => e.type)).toEqual(["ContainerStarted", "ContainerDied"]);
    await rt.removePod("u1");
    await clock.advance(1000);
    expect(events.map((e) => e.type)).toEqual(["ContainerStarted", "ContainerDied", "ContainerRemoved"]);
    expect(pleg.lastRelistMs()).toBe(clock.now());
    pleg.stop();
  });
});
