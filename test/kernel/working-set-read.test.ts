import { describe, expect, test } from "bun:test";
import { meminfoBytes } from "../../src/kernel/working-set-read.ts";

const MEMINFO = "MemTotal:        8000000 kB\nMemFree:         1000000 kB\nActive(file):     200000 kB\nInactive(file):   300000 kB\n";

describe("meminfoBytes: a /proc/meminfo field in bytes", () => {
  test.each([
    ["MemTotal", 8_000_000 * 1024],
    ["MemFree", 1_000_000 * 1024],
    ["Inactive(file) (parentheses in the key)", 300_000 * 1024],
    ["SwapTotal (absent)", 0],
  ])("%s", (key, want) => {
    expect(meminfoBytes(MEMINFO, key.split(" ")[0]!)).toBe(want);
  });
});
