import { describe, expect, test } from "bun:test";
import { takeByTopology } from "../../../../src/pod/cm/cpumanager/cpu-assignment.ts";
import { formatCPUSet, parseCPUSet } from "../../../../src/config/cpuset.ts";
import { machine } from "./machines.ts";

// Dual socket, 6 cores each, hyperthreads (upstream topoDualSocketHT): CPU n and n+6 share a core;
// socket 0 holds 0-2,6-8, socket 1 holds 3-5,9-11.
const dualSocketHT = machine(2, 3, 2);
// Single socket, 4 cores, hyperthreads (upstream topoSingleSocketHT): cores {0,4} {1,5} {2,6} {3,7}.
const singleSocketHT = machine(1, 4, 2);

describe("takeByTopology (packed) as upstream's TestTakeByTopologyNUMAPacked", () => {
  test.each([
    ["a whole socket first", dualSocketHT, "0-11", 6, "0-2,6-8"],
    ["a whole socket and then a core", dualSocketHT, "0-11", 8, "0-3,6-9"],
    ["whole cores before threads", singleSocketHT, "0-7", 2, "0,4"],
    ["an odd count: whole cores then a thread", singleSocketHT, "0-7", 3, "0-1,4"],
    ["packs onto the partly used core", singleSocketHT, "1-7", 1, "4"],
    ["packs onto the partly used socket", dualSocketHT, "1-11", 1, "6"],
    ["a whole core of the fuller socket", dualSocketHT, "1-11", 2, "1,7"],
    ["all of it", singleSocketHT, "0-7", 8, "0-7"],
    ["nothing asked", singleSocketHT, "0-7", 0, ""],
    ["a machine without threads: lowest first", machine(1, 2, 1), "1", 1, "1"],
  ])("%s", (_n, topo, available, n, want) => expect(formatCPUSet(takeByTopology(topo, parseCPUSet(available), n))).toBe(want));

  test("more than available: upstream's error", () => {
    expect(() => takeByTopology(singleSocketHT, parseCPUSet("0-2"), 4)).toThrow("not enough cpus available to satisfy request: requested=4, available=3");
  });
});
