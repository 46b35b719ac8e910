import { describe, expect, test } from "bun:test";
import { cpuSet } from "../../../../src/config/cpuset.ts";
import { dataChecksum, decodeCheckpoint, encodeCheckpoint, v2Checksum } from "../../../../src/pod/cm/cpumanager/state-checkpoint.ts";
import { emptyState, setCPUSet } from "../../../../src/pod/cm/cpumanager/state.ts";

// Reference checksums computed with upstream's own code (k8s.io/utils/dump.ForHash + FNV-32a).
describe("checksums as the kubelet computes them", () => {
  test.each([
    ["static", "0", { "uid-1": { app: "1" } }, 931880108],
    ["static", "0-1", {}, 1636926438],
    ["none", "", {}, 1353318690],
    ["static", "0,3", { b: { x: "2", a: "1" }, a: { c: "4-5" } }, 1961020639],
  ] as [string, string, Record<string, Record<string, string>>, number][])("v2 %s %j %j", (policy, def, entries, want) =>
    expect(v2Checksum(policy, def, entries)).toBe(want),
  );
  test("v4 data", () => {
    expect(dataChecksum('{"policyName":"static","defaultCpuSet":"0"}')).toBe(2091638099);
    expect(dataChecksum('{"policyName":"static","defaultCpuSet":"0","entries":{"uid-1":{"app":"1"}}}')).toBe(3918645789);
  });
});

describe("encode / decode", () => {
  const state = emptyState();
  state.defaultCPUSet = cpuSet(0);
  setCPUSet(state, "uid-1", "app", cpuSet(1));

  test("the v4 file of upstream, both generations of fields", () => {
    expect(JSON.parse(encodeCheckpoint("static", state))).toEqual({
      policyName: "static",
      defaultCpuSet: "0",
      entries: { "uid-1": { app: "1" } },
      checksum: 931880108,
      data: '{"policyName":"static","defaultCpuSet":"0","entries":{"uid-1":{"app":"1"}}}',
      dataChecksum: 3918645789,
    });
  });

  test("round trip", () => {
    const back = decodeCheckpoint(encodeCheckpoint("static", state), "static");
    expect(back.defaultCPUSet).toEqual([0]);
    expect(back.assignments.get("uid-1")?.get("app")).toEqual([1]);
  });

  test("no entries: left out, as Go's omitempty", () => {
    const text = encodeCheckpoint("none", emptyState());
    expect(text).toBe(
      `{"policyName":"none","defaultCpuSet":"","checksum":1353318690,"data":"{\\"policyName\\":\\"none\\",\\"defaultCpuSet\\":\\"\\"}","dataChecksum":${dataChecksum('{"policyName":"none","defaultCpuSet":""}')}}`,
    );
  });

  test("another policy: upstream's refusal", () => {
    expect(() => decodeCheckpoint(encodeCheckpoint("none", emptyState()), "static")).toThrow(
      'configured policy "static" differs from state checkpoint policy "none"',
    );
  });

  test("data edited without its checksum: corrupted", () => {
    const file = JSON.parse(encodeCheckpoint("static", state));
    file.data = file.data.replace('"app":"1"', '"app":"0"');
    expect(() => decodeCheckpoint(JSON.stringify(file), "static")).toThrow("could not load v4 checkpoint: checkpoint is corrupted");
  });

  test("a v2 file (no data) is read with its own checksum", () => {
    const v2 = { policyName: "static", defaultCpuSet: "0", entries: { "uid-1": { app: "1" } }, checksum: 931880108 };
    expect(decodeCheckpoint(JSON.stringify(v2), "static").assignments.get("uid-1")?.get("app")).toEqual([1]);
    expect(() => decodeCheckpoint(JSON.stringify({ ...v2, checksum: 1 }), "static")).toThrow("checkpoint is corrupted");
  });

  test("a set that does not parse", () => {
    const data = '{"policyName":"static","defaultCpuSet":"x"}';
    expect(() => decodeCheckpoint(JSON.stringify({ data, dataChecksum: dataChecksum(data) }), "static")).toThrow('could not parse default CPU set "x"');
  });
});
