import { describe, expect, test } from "bun:test";
import { compareVersions, highestSupportedVersion, parseGeneric, versionString } from "../../../../src/pod/volumes/csi/version.ts";

describe("CSI driver versions (upstream util/version)", () => {
  test.each([
    ["1.0.0", "1.0.0"],
    ["v1.2", "1.2"],
    [" 1.10.3-rc.1 ", "1.10.3"],
    ["0.3.0", "0.3.0"],
  ])("parseGeneric(%p) = %p", (s, want) => {
    expect(versionString(parseGeneric(s))).toBe(want);
  });

  test.each([
    ["1", 'illegal version string "1"'],
    ["x1.0", 'could not parse "x1.0" as version'],
    ["01.0", 'illegal zero-prefixed version component "01" in "01.0"'],
  ])("parseGeneric(%p) fails: %s", (s, message) => {
    expect(() => parseGeneric(s)).toThrow(message);
  });

  test.each([
    [["1.0.0"], "1.0.0"],
    [["0.3.0", "1.0.0", "2.0.0"], "1.0.0"],
    [["v1.2.0", "1.10.0", "1.9"], "1.10.0"],
    [["1.0.0", "junk"], "1.0.0"],
  ])("highestSupportedVersion(%p) = %p", (versions, want) => {
    expect(versionString(highestSupportedVersion(versions))).toBe(want);
  });

  test.each([
    [[], "empty array for supported versions"],
    [["0.3.0"], "highest supported version reported is 0.3.0, must be v1.x"],
    [["2.0.0"], "could not find a highest supported version from versions ([2.0.0]) reported: <nil>"],
    [["junk"], 'could not find a highest supported version from versions ([junk]) reported: could not parse "junk" as version'],
  ])("highestSupportedVersion(%p) fails: %s", (versions, message) => {
    expect(() => highestSupportedVersion(versions)).toThrow(message);
  });

  test("trailing zeros do not count", () => {
    expect(compareVersions(parseGeneric("1.0"), parseGeneric("1.0.0"))).toBe(0);
    expect(compareVersions(parseGeneric("1.0"), parseGeneric("1.0.1"))).toBe(-1);
    expect(compareVersions(parseGeneric("1.2"), parseGeneric("1.10"))).toBe(-1);
  });
});
