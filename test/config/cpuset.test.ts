import { describe, expect, test } from "bun:test";
import { cpuSet, difference, formatCPUSet, intersection, parseCPUSet, union } from "../../src/config/cpuset.ts";

describe("parseCPUSet / formatCPUSet", () => {
  test.each([
    ["", []],
    ["0", [0]],
    ["0-3", [0, 1, 2, 3]],
    ["0-3,7", [0, 1, 2, 3, 7]],
    ["7,0-1,1", [0, 1, 7]],
    ["2-2", [2]],
  ] as [string, number[]][])("%j", (s, ids) => expect(parseCPUSet(s)).toEqual(ids));

  test.each([
    ["3-1", 'invalid range "3-1" (3 > 1)'],
    ["a", "invalid syntax"],
    ["1,", "invalid syntax"],
    ["-1", "invalid syntax"],
  ])("refuses %j", (s, msg) => expect(() => parseCPUSet(s)).toThrow(msg));

  test.each([
    [[], ""],
    [[0], "0"],
    [[0, 1, 2, 3, 7], "0-3,7"],
    [[1, 3, 5], "1,3,5"],
    [[0, 1, 4, 5, 6], "0-1,4-6"],
  ] as [number[], string][])("%j prints %j", (ids, s) => expect(formatCPUSet(ids)).toBe(s));
});

test("set operations", () => {
  expect(union(cpuSet(3, 1), cpuSet(2))).toEqual([1, 2, 3]);
  expect(difference(cpuSet(0, 1, 2, 3), cpuSet(1, 3))).toEqual([0, 2]);
  expect(intersection(cpuSet(0, 1, 2), cpuSet(2, 3))).toEqual([2]);
});
