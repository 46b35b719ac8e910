// The per-pod userns file: upstream's JSON bytes, and the checks a file read back must pass.
import { describe, expect, test } from "bun:test";
import { formatMappingsFile, parseMappingsFile, podMappings } from "../../../src/pod/userns/mappings-file.ts";

describe("userns file", () => {
  test("written as Go's json.Marshal of upstream's userNamespace", () => {
    expect(formatMappingsFile(podMappings(131072, 65536))).toBe(
      '{"uidMappings":[{"hostId":131072,"containerId":0,"length":65536}],"gidMappings":[{"hostId":131072,"containerId":0,"length":65536}]}',
    );
  });

  test("read back: the mapping", () => {
    expect(parseMappingsFile(formatMappingsFile(podMappings(65536, 65536)))).toEqual({ hostId: 65536, containerId: 0, length: 65536 });
  });

  test("an upstream kubelet's file with fields in another order and extra keys", () => {
    const f = '{"gidMappings":[{"length":65536,"hostId":196608,"containerId":0}],"uidMappings":[{"containerId":0,"hostId":196608,"length":65536,"x":1}]}';
    expect(parseMappingsFile(f)).toEqual({ hostId: 196608, containerId: 0, length: 65536 });
  });

  const m = (hostId: number, containerId = 0, length = 65536) => ({ hostId, containerId, length });
  test.each([
    ["not JSON", "{", "invalid user namespace mappings file: "],
    ["a negative id", JSON.stringify({ uidMappings: [m(-1)], gidMappings: [m(-1)] }), "invalid user namespace mappings file: "],
    ["no mapping", JSON.stringify({ uidMappings: [], gidMappings: [] }), "invalid user namespace configuration: no more than one mapping allowed."],
    ["two mappings", JSON.stringify({ uidMappings: [m(65536), m(131072)], gidMappings: [m(65536), m(131072)] }), "no more than one mapping allowed."],
    ["no gid mapping", JSON.stringify({ uidMappings: [m(65536)] }), "invalid user namespace configuration: GID and UID mappings should be identical."],
    ["different gid mapping", JSON.stringify({ uidMappings: [m(65536)], gidMappings: [m(131072)] }), "GID and UID mapping should be identical"],
    [
      "root not mapped",
      JSON.stringify({ uidMappings: [m(65536, 1)], gidMappings: [m(65536, 1)] }),
      "invalid user namespace configuration: UID 0 must be mapped",
    ],
  ])("%s is refused", (_n, content, msg) => {
    expect(() => parseMappingsFile(content)).toThrow(msg);
  });
});
