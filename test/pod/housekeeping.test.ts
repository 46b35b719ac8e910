import { expect, test } from "bun:test";
import { cgroupScanKey, createCgroupScanGate } from "../../src/pod/housekeeping.ts";
import { createPodLifecycle } from "../../src/pod/lifecycle.ts";
import { createSettlingClock } from "../support/settling-clock.ts";
import { createFakeRuntime } from "./fake-runtime.ts";

test("the cgroup scan gate: due on a new state key, after an unclean scan, and every maxInterval", () => {
  let now = 0;
  const gate = createCgroupScanGate(() => now, 60_000);
  expect(gate.due("a")).toBe(true);
  gate.done("a", true);
  expect(gate.due("a")).toBe(false);
  expect(gate.due("b")).toBe(true);
  gate.done("b", false); // something was removed: confirm next time
  expect(gate.due("b")).toBe(true);
  gate.done("b", true);
  now = 59_999;
  expect(gate.due("b")).toBe(false);
  now = 60_000;
  expect(gate.due("b")).toBe(true);
});

test("the scan key changes with desired pods, worker states, runtime pods and foreign pods, not with their order", () => {
  const rp = (uid: string) => ({ uid, name: uid, namespace: "d", sandboxIds: [], containers: [] });
  const key = (desired: string[], states: Record<string, string>, running: string[], foreign: string[] = []) =>
    cgroupScanKey(new Set(desired), Object.keys(states), (u) => states[u], running.map(rp), new Set(foreign));
  const base = key(["a", "b"], { a: "running", b: "running" }, ["a", "b"]);
  expect(key(["b", "a"], { b: "running", a: "running" }, ["b", "a"])).toBe(base);
  expect(key(["a"], { a: "running", b: "running" }, ["a", "b"])).not.toBe(base);
  expect(key(["a", "b"], { a: "running", b: "terminated" }, ["a", "b"])).not.toBe(base);
  expect(key(["a", "b"], { a: "running", b: "running" }, ["a"])).not.toBe(base);
  expect(key(["a", "b"], { a: "running", b: "running" }, ["a", "b"], ["x"])).not.toBe(base);
});

test("housekeeping scans the pod cgroups once while nothing changes, and again when a pod goes", async () => {
  const clock = createSettlingClock();
  const rt = createFakeRuntime(clock.now);
  let scans = 0;
  const removed: string[] = [];
  const cgroups = {
    ensurePod: async () => undefined,
    removePod: async (uid: string) => void removed.push(uid),
    listPodUids: async () => {
      scans++;
      return [];
    },
  };
  const lc = createPodLifecycle({ runtime: rt, clock, cgroups, config: { nodeName: "n1", hostIP: "192.168.1.10" } });
  await lc.start();
  lc.handleUpdate({ op: "SET", pods: [], source: "file" });
  await lc.housekeeping();
  await lc.housekeeping();
  await lc.housekeeping();
  expect(scans).toBe(1);
  rt.foreignPodUids = () => new Set(["uid-theirs"]);
  await lc.housekeeping();
  expect(scans).toBe(2);
  await lc.stop();
  expect(removed).toEqual([]);
});

test("orphaned pod directories are cleaned only once sources are ready, with pods the sources want, workers know or the runtime runs kept", async () => {
  const clock = createSettlingClock();
  const rt = createFakeRuntime(clock.now);
  const passes: { wanted: (uid: string) => boolean; running: ReadonlySet<string> }[] = [];
  const orphanedPodDirs = {
    cleanup: async (wanted: (uid: string) => boolean, running: () => Promise<ReadonlySet<string>>) => {
      passes.push({ wanted, running: await running() });
      return { orphans: 0, errors: 0, removed: [] };
    },
  };
  const lc = createPodLifecycle({
    runtime: rt,
    clock,
    orphanedPodDirs,
    config: { nodeName: "n1", hostIP: "192.168.1.10", extraSources: ["api"] },
  });
  await lc.start();
  await lc.housekeeping();
  expect(passes).toHaveLength(0); // the API server has not listed its pods yet
  rt.foreignPodUids = () => new Set(["uid-theirs"]);
  lc.handleUpdate({ op: "SET", pods: [], source: "api" });
  await lc.housekeeping();
  expect(passes).toHaveLength(1);
  expect(passes[0]!.wanted("uid-theirs")).toBe(true);
  expect(passes[0]!.wanted("uid-gone")).toBe(false);
  await lc.stop();
});
