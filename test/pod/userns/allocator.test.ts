// The user namespace allocator: upstream's checks of the kubelet's range, random free slots, ranges
// recorded back from pods' files, release.
import { describe, expect, test } from "bun:test";
import { createUsernsAllocator, rangeError } from "../../../src/pod/userns/allocator.ts";
import { defaultMappings } from "../../../src/pod/userns/kubelet-mappings.ts";

const U = 65536;

describe("the kubelet's range", () => {
  test.each([
    ["the default range", { firstId: U, length: 2 ** 32 - U, idsPerPod: U, maxPods: 110 }, undefined],
    [
      "idsPerPod not a unit multiple",
      { firstId: U, length: 10 * U, idsPerPod: 1000, maxPods: 1 },
      "kubelet user namespace length 1000 is not a multiple of 65536",
    ],
    ["first id not a multiple", { firstId: 100_000, length: 10 * U, idsPerPod: U, maxPods: 1 }, "kubelet user assigned ID 100000 is not a multiple of 65536"],
    ["first id 0 (root)", { firstId: 0, length: 10 * U, idsPerPod: U, maxPods: 1 }, "kubelet user assigned ID 0 must be greater or equal to 65536"],
    [
      "length not a multiple",
      { firstId: U, length: 10 * U + 1, idsPerPod: U, maxPods: 1 },
      "kubelet user assigned IDs length 655361 is not a multiple of 65536",
    ],
    ["too few for maxPods", { firstId: U, length: 10 * U, idsPerPod: U, maxPods: 11 }, "kubelet user assigned IDs are not enough to support 11 pods"],
    ["two units per pod", { firstId: 2 * U, length: 20 * U, idsPerPod: 2 * U, maxPods: 10 }, undefined],
  ])("%s", (_n, o, want) => {
    expect(rangeError(o)).toBe(want);
  });

  test("the default range starts at idsPerPod and ends at 2^32", () => {
    expect(defaultMappings(U)).toEqual({ firstId: U, length: 4294901760, source: "default" });
  });
});

describe("allocation", () => {
  const small = (randomInt: (n: number) => number = () => 0) => createUsernsAllocator({ firstId: U, length: 3 * U, idsPerPod: U, maxPods: 3, randomInt });

  test("a random slot, then the next free one; each a multiple of idsPerPod above the first id", () => {
    const a = small(() => 2);
    expect(a.allocateOne("p1")).toBe(3 * U);
    expect(a.allocateOne("p2")).toBe(U); // slot 2 taken: wraps to slot 0
    expect(a.allocateOne("p3")).toBe(2 * U);
    expect(() => a.allocateOne("p4")).toThrow("could not find an empty slot to allocate a user namespace");
    expect(a.allocated("p2")).toBe(U);
    expect(a.uids().sort()).toEqual(["p1", "p2", "p3"]);
  });

  test("a released slot is free again; releasing twice says no", () => {
    const a = small();
    const first = a.allocateOne("p1");
    expect(a.release("p1")).toBe(true);
    expect(a.release("p1")).toBe(false);
    expect(a.allocated("p1")).toBeUndefined();
    expect(a.allocateOne("p2")).toBe(first);
  });

  test("record: a pod's range read back is taken; the same again is a no-op", () => {
    const a = small();
    a.record("p1", U, U);
    a.record("p1", U, U);
    expect(a.allocated("p1")).toBe(U);
    expect(a.allocateOne("p2")).toBe(2 * U);
  });

  test.each([
    ["a wrong length", "p9", U, 2 * U, "wrong user namespace length 131072"],
    ["an offset off the grid", "p9", U + 1, U, "wrong user namespace offset specified 65537"],
    ["below the range", "p9", 0, U, "id 0 is out of range"],
    ["above the range", "p9", 4 * U, U, "id 262144 is out of range"],
    ["another pod's range", "p9", U, U, 'range picked for pod "p9" already taken'],
    ["another range for the same pod", "p1", 2 * U, U, 'different user namespace range already used by pod "p1"'],
  ])("record refuses %s", (_n, uid, from, length, msg) => {
    const a = small();
    a.record("p1", U, U);
    expect(() => a.record(uid, from, length)).toThrow(msg);
  });
});
