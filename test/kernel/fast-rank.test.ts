import { describe, expect, test } from "bun:test";
import { chooseMemoryVictim, inactiveFileFromStat, memoryThresholdAt, statValue } from "../../src/kernel/fast-rank.ts";
import { podRequest } from "../../src/pod/pod-resources.ts";
import { rankMemoryPressure } from "../../src/eviction/rank.ts";
import type { PodLike } from "../../src/pod/pod-like.ts";
import { Mi, pod, podStats } from "../eviction/helpers.ts";

/** What the worker sees of a pod: usage_in_bytes and the inactive file that makes the working set. */
interface Row {
  pod: PodLike;
  usage: number;
  inactive: number;
}

/** The main thread's victim (rankMemoryPressure on fresh working sets) vs the notifier thread's. */
function both(rows: Row[]) {
  const ws = (r: Row) => Math.max(0, r.usage - r.inactive);
  const byUid = new Map(rows.map((r) => [r.pod.metadata.uid!, podStats(r.pod, { memory: ws(r) })]));
  const main = rankMemoryPressure(
    rows.map((r) => r.pod),
    (p) => byUid.get(p.metadata.uid!),
  )[0]?.pod.metadata.name;
  const reads: number[] = [];
  const cands = rows.map((r) => ({ request: podRequest(r.pod, "memory"), priority: r.pod.spec.priority ?? 0 }));
  const choice = chooseMemoryVictim(
    cands,
    (i) => rows[i]!.usage,
    (i) => (reads.push(i), rows[i]!.usage - rows[i]!.inactive),
  );
  return { main, fast: rows[choice.victim]?.pod.metadata.name, reads, choice };
}

const idle = (i: number) => ({ pod: pod(`idle-${i}`), usage: 300 * 1024 + i, inactive: 100 * 1024 });

describe("chooseMemoryVictim: the same victim as rankMemoryPressure", () => {
  const cases: [string, Row[], string][] = [
    ["one hog among idle pods", [idle(0), { pod: pod("hog"), usage: 400 * Mi, inactive: 0 }, idle(1)], "hog"],
    [
      "a file-cache-heavy pod's usage is not its working set",
      [
        { pod: pod("cache"), usage: 900 * Mi, inactive: 850 * Mi },
        { pod: pod("anon"), usage: 200 * Mi, inactive: 0 },
      ],
      "anon",
    ],
    [
      "exceeding its request ranks before a bigger pod within its request",
      [
        { pod: pod("guaranteed", { requests: { memory: "1Gi", cpu: "1" }, limits: { memory: "1Gi", cpu: "1" } }), usage: 900 * Mi, inactive: 0 },
        { pod: pod("burstable", { requests: { memory: "100Mi" } }), usage: 150 * Mi, inactive: 0 },
      ],
      "burstable",
    ],
    [
      "priority before overage",
      [
        { pod: pod("big-high", { priority: 1000 }), usage: 800 * Mi, inactive: 0 },
        { pod: pod("small-low"), usage: 10 * Mi, inactive: 0 },
      ],
      "small-low",
    ],
    [
      "a tie keeps active-pods order",
      [
        { pod: pod("first"), usage: 100 * Mi, inactive: 0 },
        { pod: pod("second"), usage: 100 * Mi, inactive: 0 },
      ],
      "first",
    ],
    [
      "usage above the request but working set within it",
      [
        { pod: pod("looks-over", { requests: { memory: "100Mi" } }), usage: 150 * Mi, inactive: 60 * Mi },
        { pod: pod("small"), usage: 1 * Mi, inactive: 0 },
      ],
      "small",
    ],
    ["a pod without a memory cgroup (usage 0) still ranks", [{ pod: pod("none"), usage: 0, inactive: 0 }], "none"],
  ];
  test.each(cases)("%s", (_name, rows, victim) => {
    const r = both(rows);
    expect(r.fast).toBe(victim);
    expect(r.fast).toBe(r.main!);
  });

  test("one memory.stat read for a hog among 100 idle pods", () => {
    const rows = Array.from({ length: 100 }, (_, i) => idle(i));
    rows.splice(37, 0, { pod: pod("hog"), usage: 500 * Mi, inactive: 2 * Mi });
    const r = both(rows);
    expect(r.fast).toBe("hog");
    expect(r.reads).toEqual([37]);
    expect(r.choice.workingSets[37]).toBe(498 * Mi);
    expect(Number.isNaN(r.choice.workingSets[0]!)).toBe(true);
  });

  test("no candidates: no victim", () => {
    expect(
      chooseMemoryVictim(
        [],
        () => 0,
        () => 0,
      ).victim,
    ).toBe(-1);
  });

  test("random tables agree with rankMemoryPressure", () => {
    let seed = 42;
    const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    const requests = [undefined, "10Mi", "100Mi", "1Gi"];
    for (let round = 0; round < 500; round++) {
      const n = 1 + rand(12);
      const rows: Row[] = [];
      for (let i = 0; i < n; i++) {
        const req = requests[rand(requests.length)];
        const usage = rand(4) === 0 ? 0 : rand(20) * 10 * Mi;
        const inactive = rand(3) === 0 ? rand(20) * 10 * Mi : 0;
        rows.push({ pod: pod(`p${i}`, { priority: [0, 0, -5, 100][rand(4)], ...(req ? { requests: { memory: req } } : {}) }), usage, inactive });
      }
      const r = both(rows);
      expect(r.fast).toBe(r.main!);
    }
  });
});

describe("memoryThresholdAt (thresholdsMet on the worker's reads)", () => {
  test.each([
    // threshold, capacity, usage, inactive → available, met
    [100 * Mi, 1024 * Mi, 950 * Mi, 0, 74 * Mi, true],
    [100 * Mi, 1024 * Mi, 950 * Mi, 100 * Mi, 174 * Mi, false],
    [100 * Mi, 1024 * Mi, 924 * Mi, 0, 100 * Mi, false], // equal is not met (strict)
    [100 * Mi, 1024 * Mi, 2048 * Mi, 0, 0, true], // available floors at 0
  ])("threshold %d capacity %d usage %d inactive %d → available %d met %p", (value, capacity, usage, inactive, available, met) => {
    expect(memoryThresholdAt(value, capacity, usage, inactive)).toEqual({ available, met });
  });
});

describe("inactiveFileFromStat", () => {
  test.each([
    ["cache 1\ntotal_inactive_file 4096\ntotal_active_file 1\n", 4096],
    ["total_inactive_file 12\n", 12],
    ["inactive_file 5\ntotal_inactive_file 7", 7],
    ["inactive_file 5\n", undefined],
  ])("%j → %p", (text, v) => expect(inactiveFileFromStat(text)).toBe(v));
});

describe("inactiveFileFromStat on cgroup v2 (memory.stat is hierarchical: no total_ lines)", () => {
  test.each([
    ["anon 10\nfile 20\ninactive_file 4096\nactive_file 1\n", 4096],
    ["inactive_file 5", 5],
    ["total_inactive_file 7\n", undefined],
    ["anon 1\n", undefined],
  ])("%j → %p", (text, v) => expect(inactiveFileFromStat(text, "inactive_file")).toBe(v));
});

describe("statValue: one key, whole-line match", () => {
  const v2root = "anon 300\nfile 200\nkernel_stack 8\nshmem_file 1\ninactive_file 50\nfile_mapped 9\n";
  test.each([
    ["anon", 300],
    ["file", 200],
    ["inactive_file", 50],
    ["active_file", undefined],
    ["kernel", undefined],
  ])("%s → %p", (key, v) => expect(statValue(v2root, key)).toBe(v));
});
