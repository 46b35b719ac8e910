import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createAutonomyStore, createOfflineStart, encodeCacheEntry, nodeForCache, type AutonomyStore } from "../../../src/pod/autonomy/index.ts";
import { createManualClock, type ManualClock } from "../../../src/manual-clock.ts";
import type { Pod } from "../../../src/pod/types.ts";
import { captureLog, type LogCapture } from "../../support/log-capture.ts";

const apiPod = (uid: string, extra: { annotations?: Record<string, string>; spec?: object } = {}) => ({
  metadata: { name: `p-${uid}`, namespace: "ns", uid, annotations: extra.annotations },
  spec: extra.spec ?? { containers: [{ name: "c", image: "busybox" }] },
});

let dir: string;
let clock: ManualClock;
let logs: LogCapture;
let delivered: Pod[][];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "offline-start-"));
  clock = createManualClock(1000);
  logs = captureLog();
  delivered = [];
});
afterEach(() => {
  logs.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** A store loaded from `files` (name → text) written under <dir>/autonomy first. */
async function storeFrom(files: Record<string, string>, maxBytes = 1 << 20): Promise<AutonomyStore> {
  const cache = join(dir, "autonomy");
  mkdirSync(cache, { recursive: true });
  for (const [name, text] of Object.entries(files)) writeFileSync(join(cache, name), text);
  const store = createAutonomyStore({ dir: cache, maxBytes, secrets: true, clock });
  await store.load();
  return store;
}
const podFile = (p: ReturnType<typeof apiPod>) => ({ [`pod_${p.metadata.uid}.json`]: encodeCacheEntry("Pod", p, 0) });
const offlineStart = (store: AutonomyStore, afterMs?: number) => createOfflineStart({ store, clock, afterMs, deliver: (pods) => delivered.push(pods) });
const uids = (pods: readonly Pod[] | undefined) => (pods ?? []).map((p) => p.metadata.uid).sort();

describe("offline start", () => {
  test("no answer within afterMs: the cached pods run as one ADD, once", async () => {
    const o = offlineStart(await storeFrom({ ...podFile(apiPod("a")), ...podFile(apiPod("b")) }), 5000);
    o.start();
    clock.advance(4999);
    expect(delivered).toEqual([]);
    clock.advance(1);
    expect(delivered.map(uids)).toEqual([["a", "b"]]);
    expect(logs.text()).toContain('reason="no answer within 5s"');
    o.unreachable("connection refused");
    expect(delivered).toHaveLength(1);
    expect(uids(o.running())).toEqual(["a", "b"]);
  });

  test("a failed first list runs them at once, without waiting for afterMs", async () => {
    const o = offlineStart(await storeFrom(podFile(apiPod("a"))));
    o.start();
    o.unreachable("connect ECONNREFUSED 127.0.0.1:6443");
    expect(delivered.map(uids)).toEqual([["a"]]);
    expect(clock.pendingTimers()).toBe(0);
  });

  test("a list that answers first: nothing runs from the cache, not even later", async () => {
    const o = offlineStart(await storeFrom(podFile(apiPod("a"))));
    o.start();
    o.listed([]);
    clock.advance(60_000);
    o.unreachable("a later list failed");
    expect(delivered).toEqual([]);
    expect(o.running()).toEqual([]);
  });

  test("stopped before the timer: nothing runs", async () => {
    const o = offlineStart(await storeFrom(podFile(apiPod("a"))));
    o.start();
    o.stop();
    clock.advance(60_000);
    expect(delivered).toEqual([]);
  });

  test("an empty cache delivers nothing", async () => {
    const o = offlineStart(await storeFrom({}));
    o.start();
    o.unreachable("refused");
    expect(delivered).toEqual([]);
    expect(logs.text()).toContain("pods=0");
  });

  test("mirror pods are never run; a pod that no longer decodes is reported with its file and skipped", async () => {
    const mirror = apiPod("m", { annotations: { "kubernetes.io/config.mirror": "abc" } });
    const broken = apiPod("x", { spec: { containers: "not a list" } });
    const o = offlineStart(await storeFrom({ ...podFile(apiPod("a")), ...podFile(mirror), ...podFile(broken) }));
    o.unreachable("refused");
    expect(delivered.map(uids)).toEqual([["a"]]);
    const line = logs.lines.find((l) => l.includes("does not decode"));
    expect(line).toContain(`file=${join(dir, "autonomy", "pod_x.json")}`);
    expect(line).toContain("pod=ns/p-x");
  });

  test("corrupt and oversized files are reported with the file named; the other pods still run", async () => {
    const small = encodeCacheEntry("Pod", apiPod("a"), 0);
    const big = encodeCacheEntry("Pod", { ...apiPod("z"), spec: { containers: [{ name: "c", image: "i".repeat(4096) }] } }, 0);
    const store = await storeFrom(
      {
        "pod_a.json": small,
        "pod_b.json": "{ not json",
        "pod_c.json": encodeCacheEntry("Pod", apiPod("d"), 0),
        "pod_z.json": big,
      },
      small.length + 1024,
    );
    const o = offlineStart(store);
    o.unreachable("refused");
    expect(delivered.map(uids)).toEqual([["a"]]);
    const text = logs.text();
    expect(text).toContain("autonomy cache file pod_b.json: not JSON; skipping it");
    expect(text).toContain("autonomy cache file pod_c.json: holds a Pod that belongs in pod_d.json");
    expect(text).toContain(`skipping a file past the size bound file=${join(store.dir, "pod_z.json")}`);
  });

  test("once the API server lists the pods, each cached pod's decision is logged and none is run from the cache any more", async () => {
    const o = offlineStart(await storeFrom({ ...podFile(apiPod("a")), ...podFile(apiPod("b")), ...podFile(apiPod("c")) }));
    o.unreachable("refused");
    const changed = { ...delivered[0]!.find((p) => p.metadata.uid === "b")! };
    changed.metadata = { ...changed.metadata, annotations: { edited: "yes" } };
    o.listed([delivered[0]!.find((p) => p.metadata.uid === "a")!, changed]);
    const decisions = logs.lines.filter((l) => l.includes("reconciling a pod run from the autonomy cache"));
    expect(decisions.map((l) => / uid=(\w+) decision=(\w+)/.exec(l)!.slice(1).join(":")).sort()).toEqual(["a:adopt", "b:update", "c:stop"]);
    expect(o.running()).toEqual([]);
  });
});

describe("nodeForCache", () => {
  test("keeps what admission reads, not the status that changes at every heartbeat", () => {
    const node = {
      metadata: { name: "n", uid: "u", labels: { a: "b" }, resourceVersion: "7" },
      spec: { taints: [{ key: "k", effect: "NoSchedule" }], podCIDR: "10.0.0.0/24" },
      status: { allocatable: { cpu: "2" }, capacity: { cpu: "2" }, conditions: [{ type: "Ready", lastHeartbeatTime: "t" }] },
    };
    expect(nodeForCache(node)).toEqual({
      metadata: { name: "n", uid: "u", labels: { a: "b" } },
      spec: { taints: [{ key: "k", effect: "NoSchedule" }] },
      status: { allocatable: { cpu: "2" }, capacity: { cpu: "2" } },
    });
  });
});
