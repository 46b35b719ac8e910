// Without a record, after a restart an evicted static pod would run again at once and
// kubelet_evictions would restart at 0: <rootDir>/eviction/state.json keeps both; corrupt files are moved aside with a
// warning; `bunlet eviction clear` lets a pod run again.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runClear } from "../../src/cli/eviction-clear.ts";
import { evictionMetrics } from "../../src/eviction/metrics.ts";
import { createEvictionRecordStore, evictionRecordPath, loadEvictionRecord, parseEvictionRecord } from "../../src/eviction/record-file.ts";
import type { CycleReport } from "../../src/eviction/synchronize.ts";
import { log } from "../../src/log.ts";
import { createPodLifecycle } from "../../src/pod/lifecycle.ts";
import type { PodLifecycle } from "../../src/pod/lifecycle-types.ts";
import type { Pod } from "../../src/pod/types.ts";
import { createRegistry } from "../../src/server/metrics.ts";
import { evictedStaticPodAdmitHandler, persistEvictions } from "../../src/eviction/record-keeping.ts";
import { makePod } from "../pod/fake-runtime.ts";
import { createFakeRuntime } from "../pod/fake-runtime.ts";
import { createSettlingClock } from "../support/settling-clock.ts";
import { pollUntil } from "../support/wait.ts";

let root: string;
let path: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "bunlet-evrec-"));
  path = evictionRecordPath(root);
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const MESSAGE = "The node was low on resource: memory. Threshold quantity: 100Mi, available: 80Mi. ";
const staticPod = (name: string, uid: string): Pod =>
  makePod({ name, uid, annotations: { "kubernetes.io/config.source": "file", "kubernetes.io/config.hash": uid } });
const evictedRecord = (p: Pod) => ({
  uid: p.metadata.uid,
  namespace: "default",
  name: p.metadata.name,
  source: "file",
  signal: "memory.available",
  message: MESSAGE,
  evictedAt: "2026-12-01T21:00:00.000Z",
});

/** A pod lifecycle (fake runtime) with the wiring's admit handler: what a restarted bunlet does. */
async function restartedNode(pods: Pod[]): Promise<{ lc: PodLifecycle; started: string[] }> {
  const clock = createSettlingClock();
  const rt = createFakeRuntime(clock.now);
  const lc = createPodLifecycle({ runtime: rt, clock, config: { nodeName: "node1", hostIP: "192.168.1.10" } });
  lc.addAdmitHandler(evictedStaticPodAdmitHandler(createEvictionRecordStore(path)));
  await lc.start();
  lc.handleUpdate({ op: "SET", pods, source: "file" });
  await clock.advance(0);
  await lc.whenIdle();
  await lc.stop();
  return { lc, started: rt.calls.filter((c) => c.startsWith("start")) };
}

describe("eviction record file", () => {
  test("evicted static pod stays evicted across a restart; a changed manifest (new UID) runs; clear lets it run", async () => {
    const web = staticPod("web-node1", "uid-v1");
    await createEvictionRecordStore(path).record([{ signal: "memory.available", pod: evictedRecord(web) }]);

    const after = await restartedNode([web]);
    expect(after.started).toEqual([]);
    const st = after.lc.getPodStatus("uid-v1")!;
    expect([st.phase, st.reason, st.message]).toEqual(["Failed", "Evicted", MESSAGE]);

    const edited = await restartedNode([staticPod("web-node1", "uid-v2")]);
    expect(edited.started).toEqual(["start web-node1/app#0"]);

    const out: string[] = [];
    const io = { stdout: (s: string) => void out.push(s), stderr: (s: string) => void out.push(s) };
    expect(runClear({ rootDir: root }, io)).toBe(0);
    expect(out.join("")).toContain("default/web-node1 uid=uid-v1");
    expect(runClear({ pod: "default/nope", rootDir: root }, io)).toBe(1);
    expect(runClear({ pod: "web-node1", rootDir: root }, io)).toBe(1);
    expect(runClear({ pod: "default/web-node1", rootDir: root }, io)).toBe(0);
    expect((await restartedNode([web])).started).toEqual(["start web-node1/app#0"]);
    // The counts stay.
    expect(loadEvictionRecord(path).evictions).toEqual({ "memory.available": 1 });
  });

  test("kubelet_evictions continues from the recorded count after a restart", async () => {
    const before = createEvictionRecordStore(path);
    await before.record([{ signal: "memory.available" }, { signal: "memory.available" }, { signal: "nodefs.available" }]);
    const registry = createRegistry();
    const onCycle = evictionMetrics(registry, ["memory.available", "pid.available"], createEvictionRecordStore(path).initialCounts());
    onCycle({ evicted: [{ signal: "memory.available" }] } as unknown as CycleReport);
    const text = registry.render();
    expect(text).toContain('kubelet_evictions{eviction_signal="memory.available"} 3');
    expect(text).toContain('kubelet_evictions{eviction_signal="nodefs.available"} 1');
    expect(text).toContain('kubelet_evictions{eviction_signal="pid.available"} 0');
  });

  test("the cycle's evictions are written off the eviction path; an operator's clear in between is not undone", async () => {
    const store = createEvictionRecordStore(path);
    const lifecycle = { sourcesReady: () => false, listPodsForApi: () => [] } as unknown as PodLifecycle;
    const persist = persistEvictions(store, lifecycle, { now: () => 0 } as never);
    const a = staticPod("a", "uid-a");
    const report = (p: Pod) =>
      ({ timeMs: 0, evicted: [{ pod: p, signal: "memory.available", message: MESSAGE, gracePeriodSeconds: 1, annotations: {} }] }) as unknown as CycleReport;
    persist(report(a));
    expect(existsSync(path)).toBe(false); // not written synchronously in the cycle
    await pollUntil(() => loadEvictionRecord(path).evicted.length === 1, "the record written");
    expect(store.evicted("uid-a")?.name).toBe("a");
    expect(runClear({ all: true, rootDir: root }, { stdout() {}, stderr() {} })).toBe(0);
    expect(store.evicted("uid-a")).toBeUndefined(); // the running store sees the clear
    persist(report(staticPod("b", "uid-b")));
    await pollUntil(() => loadEvictionRecord(path).evictions["memory.available"] === 2, "the second record");
    expect(loadEvictionRecord(path).evicted.map((p) => p.uid)).toEqual(["uid-b"]);
    // Atomic write leaves no temp files behind.
    expect(readFileSync(path, "utf8")).toEndWith("}\n");
  });

  test("a corrupt file: one clear warning naming the file, moved aside, start clean", () => {
    const lines: string[] = [];
    const capture = { log: (o: { args: unknown[] }) => void lines.push(o.args.join(" ")) };
    log.addReporter(capture);
    try {
      mkdirSync(join(root, "eviction"), { recursive: true });
      writeFileSync(path, '{"version":1,"evictions":{"memory.available":-3},"evicted":[]}');
      const store = createEvictionRecordStore(path);
      expect(store.initialCounts()).toEqual({});
      expect(store.evicted("x")).toBeUndefined();
      expect(existsSync(`${path}.corrupt`)).toBe(true);
      expect(lines.join("\n")).toContain(`eviction state file is corrupt; moved aside, starting with no eviction state file=${path}`);
      expect(lines.join("\n")).toContain("field evictions.memory.available");
      writeFileSync(path, "\u0000\u0001garbage");
      expect(loadEvictionRecord(path)).toEqual({ version: 1, evictions: {}, evicted: [] });
    } finally {
      log.removeReporter(capture);
    }
    expect(() => parseEvictionRecord('{"version":2}', "f")).toThrow("f: field version");
  });
});
