// The checksums below were computed by upstream's own code path (encoding/json + go-spew "%#v" of
// checkpointData + FNV-32a, as checkpointmanager/checksum does) over the same files.
import { describe, expect, test } from "bun:test";
import {
  checkpointHashText,
  CorruptCheckpointError,
  marshalCheckpoint,
  toCheckpointJson,
  unmarshalCheckpoint,
  type CheckpointData,
} from "../../../src/pod/devicemanager/checkpoint.ts";

const empty: CheckpointData = { entries: [], registeredDevices: {} };
const registered: CheckpointData = { entries: [], registeredDevices: { "example.com/resource": ["Dev-2", "Dev-1"], "a.b/c": [] } };
const assigned: CheckpointData = {
  entries: [
    {
      podUID: "u1",
      containerName: "c",
      resourceName: "example.com/resource",
      deviceIds: new Map([
        [-1, ["Dev-1"]],
        [0, ["Dev-3", "Dev-2"]],
      ]),
      allocResp: new Uint8Array([18, 20, 10, 9, 47, 116, 109, 112]),
    },
    { podUID: "u2", containerName: "d", resourceName: "x.io/y", deviceIds: new Map([[-1, ["a"]]]), allocResp: new Uint8Array([]) },
  ],
  registeredDevices: { "example.com/resource": ["Dev-1"] },
};

describe("device manager checkpoint", () => {
  test.each([
    ["no entries", empty, 3467439661],
    ["registered devices only", registered, 1965789593],
    ["entries with NUMA nodes and answers", assigned, 1085219274],
  ])("%s: upstream's checksum", (_, data, checksum) => {
    expect(JSON.parse(marshalCheckpoint(data)).Checksum).toBe(checksum);
  });

  test("the file is upstream's JSON: Data{PodDeviceEntries, RegisteredDevices}, Checksum; AllocResp in base64", () => {
    const j = JSON.parse(marshalCheckpoint(assigned));
    expect(Object.keys(j)).toEqual(["Data", "Checksum"]);
    expect(j.Data.PodDeviceEntries[0]).toEqual({
      PodUID: "u1",
      ContainerName: "c",
      ResourceName: "example.com/resource",
      DeviceIDs: { "-1": ["Dev-1"], "0": ["Dev-3", "Dev-2"] },
      AllocResp: "EhQKCS90bXA=",
    });
    expect(JSON.parse(marshalCheckpoint(empty)).Data.PodDeviceEntries).toBeNull(); // Go's nil slice
    expect(marshalCheckpoint(assigned)).toContain('"DeviceIDs":{"-1":["Dev-1"],"0":["Dev-3","Dev-2"]}'); // Go sorts map keys as strings
  });

  test("spew's text of the data", () => {
    expect(checkpointHashText(toCheckpointJson(registered))).toBe(
      "(checkpoint.checkpointData){PodDeviceEntries:([]checkpoint.PodDevicesEntry)<nil> RegisteredDevices:(map[string][]string)map[a.b/c:[] example.com/resource:[Dev-2 Dev-1]]}",
    );
  });

  test("round trip", () => {
    const back = unmarshalCheckpoint(marshalCheckpoint(assigned));
    expect(back.registeredDevices).toEqual(assigned.registeredDevices);
    expect(back.entries.map((e) => ({ ...e, deviceIds: [...e.deviceIds] }))).toEqual(assigned.entries.map((e) => ({ ...e, deviceIds: [...e.deviceIds] })));
  });

  test("a changed file fails its checksum; a file that is not JSON is corrupt", () => {
    const text = marshalCheckpoint(assigned).replace(
      '"RegisteredDevices":{"example.com/resource":["Dev-1"]',
      '"RegisteredDevices":{"example.com/resource":["Dev-9"]',
    );
    expect(text).toContain("Dev-9");
    expect(() => unmarshalCheckpoint(text)).toThrow(CorruptCheckpointError);
    expect(() => unmarshalCheckpoint(text)).toThrow(/checksum 1085219274, computed/);
    expect(() => unmarshalCheckpoint("{")).toThrow(CorruptCheckpointError);
  });
});
