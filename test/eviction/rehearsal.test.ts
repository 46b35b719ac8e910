import { describe, expect, test } from "bun:test";
import { rehearseEviction } from "../../src/eviction/rehearsal.ts";
import { evictionConfig } from "../../src/eviction/types.ts";
import { thresholds } from "./helpers.ts";

describe("rehearseEviction (synthetic memory pressure, no-op kill)", () => {
  test.each([
    ["memory.available hard: every cycle evicts", { evictionHard: { "memory.available": "100Mi" } }, 3],
    ["allocatable only (the hard memory threshold copied onto pods)", { evictionHard: { "memory.available": "100Mi" }, enforceNodeAllocatable: ["pods"] }, 3],
    [
      "memory only soft, with a grace period: met, not yet actionable, nobody ranked",
      { evictionHard: { "nodefs.available": "10%" }, evictionSoft: { "memory.available": "100Mi" }, evictionSoftGracePeriod: { "memory.available": "30s" } },
      0,
    ],
    ["disk only: a memory-only cycle has nothing to act on", { evictionHard: { "nodefs.available": "10%" } }, 0],
  ])("%s", async (_name, input, want) => {
    expect(await rehearseEviction(evictionConfig({ thresholds: thresholds(input) }), 3)).toBe(want);
  });
});
