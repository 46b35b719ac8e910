import { describe, expect, test } from "bun:test";
import {
  CgroupParseError,
  formatPsiTrigger,
  memoryEventsDelta,
  parseFlatKeyed,
  parseMemoryEvents,
  parsePressure,
  parsePsiTrigger,
} from "../../src/kernel/cgroup-parse.ts";

describe("parseFlatKeyed", () => {
  test.each([
    ["cache 10\nrss 20\n", { cache: 10, rss: 20 }],
    ["total_inactive_file 4096\n\n", { total_inactive_file: 4096 }],
    ["", {}],
    ["hierarchical_memory_limit 9223372036854771712\n", { hierarchical_memory_limit: 9223372036854771712 }],
  ])("%j", (text, want) => {
    expect(parseFlatKeyed(text)).toEqual(want);
  });

  test.each([["cache\n"], ["cache x\n"], ["a 1 2\n"], ["a 1.5\n"]])("rejects %j naming file and line", (text) => {
    expect(() => parseFlatKeyed(`ok 1\n${text}`, "/x/memory.stat")).toThrow(/\/x\/memory\.stat line 2/);
  });
});

describe("parseMemoryEvents", () => {
  test("all counters", () => {
    expect(parseMemoryEvents("low 1\nhigh 2\nmax 3\noom 4\noom_kill 5\noom_group_kill 6\n")).toEqual({
      low: 1,
      high: 2,
      max: 3,
      oom: 4,
      oom_kill: 5,
      oom_group_kill: 6,
    });
  });
  test("missing keys are named", () => {
    expect(() => parseMemoryEvents("low 1\nhigh 2\n", "/cg/memory.events")).toThrow(/\/cg\/memory\.events: missing max, oom, oom_kill/);
  });
  test.each([
    [
      { low: 0, high: 0, max: 0, oom: 0, oom_kill: 0 },
      { low: 0, high: 3, max: 0, oom: 1, oom_kill: 1 },
      { high: 3, oom: 1, oom_kill: 1 },
    ],
    [{ low: 5, high: 0, max: 0, oom: 0, oom_kill: 0 }, { low: 5, high: 0, max: 0, oom: 0, oom_kill: 0 }, {}],
    [{ low: 0, high: 0, max: 0, oom: 0, oom_kill: 0 }, { low: 0, high: 0, max: 0, oom: 0, oom_kill: 0, oom_group_kill: 2 }, { oom_group_kill: 2 }],
  ])("delta %j → %j", (a, b, want) => {
    expect(memoryEventsDelta(a, b)).toEqual(want);
  });
});

describe("parsePressure", () => {
  test.each([
    [
      "some avg10=0.00 avg60=0.00 avg300=0.00 total=8766\nfull avg10=1.50 avg60=0.25 avg300=0.10 total=4498\n",
      { some: { avg10: 0, avg60: 0, avg300: 0, total: 8766 }, full: { avg10: 1.5, avg60: 0.25, avg300: 0.1, total: 4498 } },
    ],
    ["some avg10=12.34 avg60=5.00 avg300=1.00 total=123456789\n", { some: { avg10: 12.34, avg60: 5, avg300: 1, total: 123456789 } }],
  ])("%j", (text, want) => {
    expect(parsePressure(text)).toEqual(want);
  });
  test.each([["full avg10=0.00 avg60=0.00 avg300=0.00 total=1\n"], ["some avg10=x\n"], [""]])("rejects %j", (text) => {
    expect(() => parsePressure(text, "/p/memory.pressure")).toThrow(CgroupParseError);
  });
});

describe("parsePsiTrigger", () => {
  test.each([
    ["some 150000 1000000", { kind: "some", stallUs: 150000, windowUs: 1000000 }],
    [" full 100000 2000000 ", { kind: "full", stallUs: 100000, windowUs: 2000000 }],
    ["some 500000 500000", { kind: "some", stallUs: 500000, windowUs: 500000 }],
  ])("%j", (text, want) => {
    expect(parsePsiTrigger(text)).toEqual(want as never);
    expect(formatPsiTrigger(parsePsiTrigger(text))).toBe(text.trim());
  });
  test.each([
    ["some 150000", /expected "<some\|full> <stall µs> <window µs>"/],
    ["avg 1 1000000", /expected/],
    ["some 150000 100000", /window 100000 µs must be within 500000\.\.10000000/],
    ["some 150000 20000000", /window/],
    ["some 0 1000000", /stall 0 µs must be within 1\.\.window/],
    ["some 2000000 1000000", /stall/],
  ])("rejects %j", (text, re) => {
    expect(() => parsePsiTrigger(text)).toThrow(re);
  });
});
