import { expect, test } from "bun:test";
import { nodeConditionEvents, nodeStatusEventMessage, rebootedMessage } from "../../src/node/condition-events.ts";

const conds = (m: Record<string, string>) => Object.entries(m).map(([type, status]) => ({ type, status }));

test.each([
  [
    "a new Node: the pressure conditions, not Ready",
    undefined,
    { MemoryPressure: "False", DiskPressure: "False", PIDPressure: "False", Ready: "True" },
    ["NodeHasSufficientMemory", "NodeHasNoDiskPressure", "NodeHasSufficientPID"],
  ],
  ["nothing changed", { MemoryPressure: "False", Ready: "True" }, { MemoryPressure: "False", Ready: "True" }, []],
  ["Ready False → True", { Ready: "False" }, { Ready: "True" }, ["NodeReady"]],
  ["Ready True → False", { Ready: "True" }, { Ready: "False" }, ["NodeNotReady"]],
  ["memory pressure comes", { MemoryPressure: "False" }, { MemoryPressure: "True" }, ["NodeHasInsufficientMemory"]],
  ["disk pressure goes", { DiskPressure: "True" }, { DiskPressure: "False" }, ["NodeHasNoDiskPressure"]],
  ["PID pressure comes", { PIDPressure: "False" }, { PIDPressure: "True" }, ["NodeHasInsufficientPID"]],
  [
    "Unknown (node controller) → False",
    { MemoryPressure: "Unknown", Ready: "Unknown" },
    { MemoryPressure: "False", Ready: "True" },
    ["NodeHasSufficientMemory", "NodeReady"],
  ],
] as const)("%s", (_what, before, after, expected) => {
  expect(nodeConditionEvents(before && conds(before), conds(after))).toEqual([...expected]);
});

test("message", () => expect(nodeStatusEventMessage("n1", "NodeReady")).toBe("Node n1 status is now: NodeReady"));

test.each([
  ["same boot", "b1", "b1", undefined],
  ["first report", undefined, "b1", undefined],
  ["rebooted", "b0", "b1", "Node n1 has been rebooted, boot id: b1"],
] as const)("Rebooted: %s", (_what, before, now, expected) => {
  expect(rebootedMessage("n1", before, now)).toBe(expected);
});
