import { describe, expect, test } from "bun:test";
import { containerEvents, createPleg, type PlegEvent, statusMatchesRelist } from "../../src/pod/pleg.ts";
import type { ContainerState, RuntimePod, RuntimePodStatus } from "../../src/pod/runtime.ts";
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

test("a relist that gets the very array of the last one diffs nothing, and still counts as a relist", async () => {
  const clock = createSettlingClock();
  const pod: RuntimePod = { uid: "u1", name: "p", namespace: "d", sandboxIds: ["s1"], containers: [{ id: "c1", name: "app", state: "running" }] };
  let listing: RuntimePod[] = [pod];
  const runtime = { getPods: async () => listing } as unknown as Parameters<typeof createPleg>[0]["runtime"];
  const relists: boolean[] = [];
  const pleg = createPleg({ runtime, clock, onEvents: () => {}, onRelist: (ok) => relists.push(ok) });
  expect((await pleg.relist()).map((e) => e.type)).toEqual(["ContainerStarted"]);
  await clock.advance(1000);
  expect(await pleg.relist()).toEqual([]);
  expect(pleg.lastRelistMs()).toBe(clock.now());
  expect(pleg.relisted()?.pods.get("u1")).toBe(pod);
  listing = [{ ...pod, containers: [{ id: "c1", name: "app", state: "exited" }] }];
  expect((await pleg.relist()).map((e) => e.type)).toEqual(["ContainerDied"]);
  expect(relists).toEqual([true, true, true]);
});

describe("statusMatchesRelist", () => {
  const status = (containers: [string, ContainerState][], sandboxes: [string, "ready" | "notready"][] = [["s1", "ready"]]): RuntimePodStatus => ({
    uid: "u",
    name: "p",
    namespace: "default",
    sandboxes: sandboxes.map(([id, state]) => ({ id, attempt: 0, state, createdAtMs: 0 })),
    containers: containers.map(
      ([id, state]) =>
        ({ id, name: "c", image: "i", state, createdAtMs: 0, startedAtMs: 0, finishedAtMs: 0, attempt: 0 }) as RuntimePodStatus["containers"][number],
    ),
  });
  const relisted = (containers: [string, ContainerState][], sandboxIds = ["s1"], ready = 1): RuntimePod => ({
    uid: "u",
    name: "p",
    namespace: "default",
    sandboxIds,
    readySandboxes: ready,
    containers: containers.map(([id, state]) => ({ id, name: "c", state })),
  });
  test.each([
    ["same sandbox and container states", status([["c1", "running"]]), relisted([["c1", "running"]]), true],
    ["container exited since", status([["c1", "running"]]), relisted([["c1", "exited"]]), false],
    [
      "new container",
      status([["c1", "exited"]]),
      relisted([
        ["c1", "exited"],
        ["c2", "running"],
      ]),
      false,
    ],
    ["sandbox no longer ready", status([["c1", "running"]]), relisted([["c1", "running"]], ["s1"], 0), false],
    ["sandbox replaced", status([["c1", "running"]]), relisted([["c1", "running"]], ["s2"]), false],
    ["pod gone from the runtime", status([["c1", "running"]]), undefined, false],
    ["nothing before, nothing now", status([], []), undefined, true],
  ] as const)("%s", (_name, s, p, want) => {
    expect(statusMatchesRelist(s, p)).toBe(want);
  });
});
