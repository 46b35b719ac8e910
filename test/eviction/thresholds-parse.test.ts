import { describe, expect, test } from "bun:test";
import { quantityValue } from "../../src/config/quantity.ts";
import {
  DEFAULT_EVICTION_HARD,
  effectiveEvictionHard,
  MapFlagError,
  parseEvictionMapFlag,
  parseThresholdConfig,
  ThresholdParseError,
  type ThresholdConfigInput,
} from "../../src/eviction/thresholds-parse.ts";
import type { Threshold, ThresholdValue } from "../../src/eviction/threshold.ts";

const v = (x: ThresholdValue) => (x.quantity ? String(quantityValue(x.quantity)) : `${x.percentage}f`);
/** Compact, order-free description: "signal<value[@graceMs][/min]". */
const describeAll = (ts: Threshold[]) =>
  ts.map((t) => `${t.signal}<${v(t.value)}${t.gracePeriodMs ? `@${t.gracePeriodMs}` : ""}${t.minReclaim ? `/${v(t.minReclaim)}` : ""}`).sort();

const f32 = (p: number) => Math.fround(Math.fround(p) / 100);
const NONE: string[] = [];

// [name, input, expected thresholds (multiset)]
const ok: [string, ThresholdConfigInput, string[]][] = [
  ["empty hard map disables defaults", { evictionHard: {}, enforceNodeAllocatable: [] }, NONE],
  [
    "unset hard map gets the 5 Linux defaults (+ allocatable copy)",
    { enforceNodeAllocatable: ["pods"] },
    [
      `allocatableMemory.available<${100 * 1048576}`,
      `imagefs.available<${f32(15)}f`,
      `imagefs.inodesFree<${f32(5)}f`,
      `memory.available<${100 * 1048576}`,
      `nodefs.available<${f32(10)}f`,
      `nodefs.inodesFree<${f32(5)}f`,
    ],
  ],
  ["one key drops the other defaults", { evictionHard: { "memory.available": "1Gi" }, enforceNodeAllocatable: [] }, [`memory.available<${1 << 30}`]],
  [
    "mergeDefaultEvictionSettings fills missing defaults, user wins",
    { evictionHard: { "memory.available": "1Gi" }, mergeDefaultEvictionSettings: true, enforceNodeAllocatable: [] },
    [
      `imagefs.available<${f32(15)}f`,
      `imagefs.inodesFree<${f32(5)}f`,
      `memory.available<${1 << 30}`,
      `nodefs.available<${f32(10)}f`,
      `nodefs.inodesFree<${f32(5)}f`,
    ],
  ],
  [
    "hard memory copied to allocatable with pods enforced",
    { evictionHard: { "memory.available": "150Mi" } },
    [`allocatableMemory.available<${150 * 1048576}`, `memory.available<${150 * 1048576}`],
  ],
  [
    "no copy without pods in enforceNodeAllocatable",
    { evictionHard: { "memory.available": "150Mi" }, enforceNodeAllocatable: ["system-reserved"] },
    [`memory.available<${150 * 1048576}`],
  ],
  [
    "soft memory is not copied to allocatable",
    { evictionHard: {}, evictionSoft: { "memory.available": "300Mi" }, evictionSoftGracePeriod: { "memory.available": "30s" } },
    [`memory.available<${300 * 1048576}@30000`],
  ],
  [
    "soft with 0s grace acts hard and IS copied (trap 3)",
    { evictionHard: {}, evictionSoft: { "memory.available": "300Mi" }, evictionSoftGracePeriod: { "memory.available": "0s" } },
    [`allocatableMemory.available<${300 * 1048576}`, `memory.available<${300 * 1048576}`],
  ],
  ["0% disables", { evictionHard: { "nodefs.available": "0%" } }, NONE],
  ["100% disables", { evictionHard: { "nodefs.available": "100%" } }, NONE],
  ["0.0% is accepted as a 0 fraction (trap 5)", { evictionHard: { "nodefs.available": "0.0%" } }, ["nodefs.available<0f"]],
  ["100.0% is accepted as 1", { evictionHard: { "nodefs.available": "100.0%" } }, ["nodefs.available<1f"]],
  ["10% is float32", { evictionHard: { "nodefs.available": "10%" } }, [`nodefs.available<${f32(10)}f`]],
  ["10%% trims all trailing %", { evictionHard: { "nodefs.available": "10%%" } }, [`nodefs.available<${f32(10)}f`]],
  ["10.5%", { evictionHard: { "imagefs.available": "10.5%" } }, [`imagefs.available<${f32(10.5)}f`]],
  ["1.5Gi", { evictionHard: { "nodefs.available": "1.5Gi" } }, [`nodefs.available<${1.5 * (1 << 30)}`]],
  ["1.1G decimal", { evictionHard: { "nodefs.available": "1.1G" } }, ["nodefs.available<1100000000"]],
  ["1e3 exponent", { evictionHard: { "pid.available": "1e3" } }, ["pid.available<1000"]],
  ["plain count", { evictionHard: { "nodefs.inodesFree": "500" } }, ["nodefs.inodesFree<500"]],
  ["milli is accepted (rounds up)", { evictionHard: { "pid.available": "500m" } }, ["pid.available<1"]],
  ["containerfs signal parses", { evictionHard: { "containerfs.available": "1Gi" } }, [`containerfs.available<${1 << 30}`]],
  [
    "all nine signals",
    {
      evictionHard: {
        "memory.available": "1Mi",
        "allocatableMemory.available": "1Mi",
        "nodefs.available": "1%",
        "nodefs.inodesFree": "1%",
        "imagefs.available": "1%",
        "imagefs.inodesFree": "1%",
        "containerfs.available": "1%",
        "containerfs.inodesFree": "1%",
        "pid.available": "10",
      },
      enforceNodeAllocatable: [],
    },
    [
      `allocatableMemory.available<1048576`,
      `containerfs.available<${f32(1)}f`,
      `containerfs.inodesFree<${f32(1)}f`,
      `imagefs.available<${f32(1)}f`,
      `imagefs.inodesFree<${f32(1)}f`,
      `memory.available<1048576`,
      `nodefs.available<${f32(1)}f`,
      `nodefs.inodesFree<${f32(1)}f`,
      "pid.available<10",
    ],
  ],
  ["grace for a signal without soft threshold is validated then ignored", { evictionHard: {}, evictionSoftGracePeriod: { "nodefs.available": "1m" } }, NONE],
  [
    "fractional grace 1.5m = 90s",
    { evictionHard: {}, evictionSoft: { "nodefs.available": "1Gi" }, evictionSoftGracePeriod: { "nodefs.available": "1.5m" } },
    [`nodefs.available<${1 << 30}@90000`],
  ],
  [
    "grace 1m30s",
    { evictionHard: {}, evictionSoft: { "nodefs.available": "1Gi" }, evictionSoftGracePeriod: { "nodefs.available": "1m30s" } },
    [`nodefs.available<${1 << 30}@90000`],
  ],
  [
    "bare 0 grace is allowed",
    { evictionHard: {}, evictionSoft: { "nodefs.available": "1Gi" }, evictionSoftGracePeriod: { "nodefs.available": "0" } },
    [`nodefs.available<${1 << 30}`],
  ],
  [
    "min reclaim applies to hard and soft of the signal",
    {
      evictionHard: { "nodefs.available": "1Gi" },
      evictionSoft: { "nodefs.available": "2Gi" },
      evictionSoftGracePeriod: { "nodefs.available": "1m" },
      evictionMinimumReclaim: { "nodefs.available": "500Mi" },
    },
    [`nodefs.available<${1 << 30}/${500 * 1048576}`, `nodefs.available<${2 * 2 ** 30}@60000/${500 * 1048576}`],
  ],
  [
    "min reclaim 0 is fine",
    { evictionHard: { "nodefs.available": "1Gi" }, evictionMinimumReclaim: { "nodefs.available": "0" } },
    [`nodefs.available<${1 << 30}/0`],
  ],
  [
    "min reclaim percentage > 100% is accepted",
    { evictionHard: { "nodefs.available": "1Gi" }, evictionMinimumReclaim: { "nodefs.available": "150%" } },
    [`nodefs.available<${1 << 30}/${f32(150)}f`],
  ],
  ["min reclaim for a signal without threshold is ignored", { evictionHard: {}, evictionMinimumReclaim: { "pid.available": "10" } }, NONE],
  [
    "allocatable copy keeps min reclaim",
    { evictionHard: { "memory.available": "100Mi" }, evictionMinimumReclaim: { "memory.available": "50Mi" } },
    [`allocatableMemory.available<${100 * 1048576}/${50 * 1048576}`, `memory.available<${100 * 1048576}/${50 * 1048576}`],
  ],
];

describe("parseThresholdConfig: accepted inputs", () => {
  test.each(ok)("%s", (_name, input, expected) => {
    expect(describeAll(parseThresholdConfig(input))).toEqual([...expected].sort());
  });
});

// [name, input, substring the message must contain]
const bad: [string, ThresholdConfigInput, string][] = [
  ["unknown hard signal", { evictionHard: { "memory.avail": "1Gi" } }, "unsupported eviction signal memory.avail"],
  ["swap.available is not a signal", { evictionHard: { "swap.available": "1Gi" } }, "unsupported eviction signal swap.available"],
  ["case-sensitive names", { evictionHard: { "Memory.available": "1Gi" } }, "unsupported eviction signal Memory.available"],
  ["unknown soft signal", { evictionHard: {}, evictionSoft: { foo: "1Gi" } }, "unsupported eviction signal foo"],
  ["unknown grace signal", { evictionHard: {}, evictionSoftGracePeriod: { foo: "1m" } }, "unsupported eviction signal foo"],
  ["unknown min-reclaim signal", { evictionHard: {}, evictionMinimumReclaim: { foo: "1Gi" } }, "unsupported eviction signal foo"],
  ["negative percentage", { evictionHard: { "nodefs.available": "-5%" } }, "eviction percentage threshold nodefs.available must be >= 0%: -5%"],
  ["percentage above 100%", { evictionHard: { "nodefs.available": "150%" } }, "eviction percentage threshold nodefs.available must be <= 100%: 150%"],
  ["10000% rejected (v1.21+)", { evictionHard: { "nodefs.available": "10000%" } }, "must be <= 100%"],
  ["garbage percentage", { evictionHard: { "nodefs.available": "abc%" } }, 'strconv.ParseFloat: parsing "abc": invalid syntax'],
  ["zero quantity", { evictionHard: { "memory.available": "0" } }, "eviction threshold memory.available must be positive: 0"],
  ["0Mi quantity", { evictionHard: { "memory.available": "0Mi" } }, "must be positive: 0"],
  ["negative quantity", { evictionHard: { "memory.available": "-150Mi" } }, "eviction threshold memory.available must be positive: -150Mi"],
  ["empty value", { evictionHard: { "memory.available": "" } }, "quantities must match the regular expression"],
  ["bad quantity", { evictionHard: { "memory.available": "1Gb" } }, "memory.available"],
  ["untrimmed YAML value", { evictionHard: { "memory.available": " 100Mi" } }, "quantities must match"],
  [
    "soft without grace",
    { evictionHard: {}, evictionSoft: { "memory.available": "1Gi" } },
    "grace period must be specified for the soft eviction threshold memory.available",
  ],
  [
    "grace without unit",
    { evictionHard: {}, evictionSoft: { "memory.available": "1Gi" }, evictionSoftGracePeriod: { "memory.available": "30" } },
    'time: missing unit in duration "30"',
  ],
  [
    "negative grace",
    { evictionHard: {}, evictionSoftGracePeriod: { "memory.available": "-1m" } },
    "invalid eviction grace period specified: -1m, must be a positive value",
  ],
  [
    "0% min reclaim",
    { evictionHard: {}, evictionMinimumReclaim: { "memory.available": "0%" } },
    "eviction percentage minimum reclaim memory.available must be positive: 0%",
  ],
  [
    "negative min reclaim",
    { evictionHard: {}, evictionMinimumReclaim: { "memory.available": "-1Mi" } },
    "negative eviction minimum reclaim specified for memory.available",
  ],
  ["negative % min reclaim", { evictionHard: {}, evictionMinimumReclaim: { "nodefs.available": "-5%" } }, "must be positive: -5%"],
];

describe("parseThresholdConfig: errors", () => {
  test.each(bad)("%s", (_name, input, text) => {
    let err: unknown;
    try {
      parseThresholdConfig(input);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ThresholdParseError);
    expect((err as Error).message).toContain(text);
  });

  test("the error names the flag or field and the value", () => {
    expect(() => parseThresholdConfig({ evictionHard: { "memory.available": "-1Gi" }, hardSource: "--eviction-hard" })).toThrow(
      'invalid --eviction-hard value "-1Gi" for memory.available',
    );
    expect(() => parseThresholdConfig({ evictionHard: { foo: "1" } })).toThrow(/evictionHard.*valid signals: memory\.available/);
  });
});

describe("effectiveEvictionHard", () => {
  test("unset → defaults; set → as is; merge → defaults under user keys", () => {
    expect(effectiveEvictionHard(undefined)).toEqual({ ...DEFAULT_EVICTION_HARD });
    expect(effectiveEvictionHard({ "pid.available": "100" })).toEqual({ "pid.available": "100" });
    expect(effectiveEvictionHard({ "nodefs.available": "20%" }, true)).toEqual({ ...DEFAULT_EVICTION_HARD, "nodefs.available": "20%" });
  });
});

describe("parseEvictionMapFlag (cliflag)", () => {
  const cases: [string, "<" | "=", Record<string, string>][] = [
    ["memory.available<100Mi,nodefs.available<10%", "<", { "memory.available": "100Mi", "nodefs.available": "10%" }],
    [" memory.available < 100Mi ,,", "<", { "memory.available": "100Mi" }],
    ["memory.available<1Gi,memory.available<2Gi", "<", { "memory.available": "2Gi" }],
    ["memory.available=1m30s", "=", { "memory.available": "1m30s" }],
    ["a<b<c", "<", { a: "b<c" }],
    ["", "<", {}],
  ];
  test.each(cases)("%p", (input, sep, expected) => {
    expect(parseEvictionMapFlag("--x", input, sep)).toEqual(expected);
  });
  test("missing separator", () => {
    expect(() => parseEvictionMapFlag("--eviction-hard", "memory.available<1Gi, ", "<")).toThrow("malformed pair");
    expect(() => parseEvictionMapFlag("--eviction-hard", "memory.available=1Gi", "<")).toThrow(MapFlagError);
    expect(() => parseEvictionMapFlag("--eviction-hard", "memory.available=1Gi", "<")).toThrow("malformed pair, expect string<string");
    expect(() => parseEvictionMapFlag("--eviction-soft-grace-period", "x", "=")).toThrow("expect string=string");
  });
});
