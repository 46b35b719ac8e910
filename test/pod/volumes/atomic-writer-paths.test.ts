// upstream pkg/volume/util/atomic_writer.go validatePayload/validatePath: a payload path that is
// absolute, has a ".." element, starts with "..", or is too long fails the whole write, before any
// file is written; a clean payload is written under its cleaned paths.
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { payloadPathError, writeAtomically } from "../../../src/pod/volumes/atomic-writer.ts";

const base = mkdtempSync(join(tmpdir(), `bunlet-aw-${process.pid}-`));
afterAll(() => rmSync(base, { recursive: true, force: true }));

describe("payload paths", () => {
  test.each([
    ["a", undefined],
    ["a/b/c", undefined],
    ["..a", "invalid path: must not start with '..': ..a"],
    ["a/..b", undefined],
    ["...", "invalid path: must not start with '..': ..."],
    ["", 'invalid path: must not be empty: ""'],
    ["/etc/passwd", "invalid path: must be relative path: /etc/passwd"],
    ["../x", "invalid path: must not contain '..': ../x"],
    ["a/../../x", "invalid path: must not contain '..': a/../../x"],
    ["a/..", "invalid path: must not contain '..': a/.."],
    ["..", "invalid path: must not contain '..': .."],
    ["..data", "invalid path: must not start with '..': ..data"],
    [`${"n".repeat(256)}`, "invalid path: filenames must be less than or equal to 255 characters"],
    [`${"a/".repeat(2100)}b`, "invalid path: must be less than or equal to 4096 characters"],
  ])("%p", (p, want) => expect(payloadPathError(p)).toBe(want));

  test("a bad path fails the write before anything is written; the last good files stay", () => {
    const dir = join(base, "vol");
    writeAtomically(dir, { good: { content: "1" } });
    for (const bad of ["../../escaped", "/abs", "x/../../escaped", "..data"]) {
      expect(() => writeAtomically(dir, { good: { content: "2" }, [bad]: { content: "evil" } })).toThrow(/^invalid path: /);
    }
    expect(readFileSync(join(dir, "good"), "utf8")).toBe("1");
    expect(existsSync(join(base, "escaped"))).toBe(false);
    expect(readdirSync(base)).toEqual(["vol"]);
  });

  test("clean paths are written cleaned", () => {
    const dir = join(base, "vol2");
    writeAtomically(dir, { "./a//b": { content: "x" } });
    expect(readFileSync(join(dir, "a", "b"), "utf8")).toBe("x");
  });
});
