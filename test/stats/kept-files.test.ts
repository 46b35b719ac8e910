// stats/kept-files.ts on ordinary files: the read path the eviction stats keep open (test/stats/fd-flood.test.ts
// runs it on cgroupfs, out of file descriptors).
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createKeptFiles } from "../../src/stats/kept-files.ts";

describe("kept files", () => {
  const dir = mkdtempSync(join(tmpdir(), "bunlet-kept-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  test("re-read fresh at offset 0, reopened when replaced, ENOENT when gone, bounded", () => {
    const f = createKeptFiles(2);
    const p = join(dir, "a");
    writeFileSync(p, "one");
    expect(f.read(p)).toBe("one");
    writeFileSync(p, "two, longer"); // same inode, new content
    expect(f.read(p)).toBe("two, longer");
    unlinkSync(p);
    writeFileSync(p, "three"); // a new file at the path
    expect(f.read(p)).toBe("three");
    unlinkSync(p);
    expect(() => f.read(p)).toThrow(expect.objectContaining({ code: "ENOENT" }));
    for (const n of ["x", "y", "z"]) {
      writeFileSync(join(dir, n), "x".repeat(20_000)); // larger than the first buffer
      expect(f.read(join(dir, n)).length).toBe(20_000);
    }
    expect(f.size()).toBe(2);
    f.forget(dir);
    expect(f.size()).toBe(0);
  });
});
