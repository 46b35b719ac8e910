// writeFileAtomic and writeFileAtomicSync: the target is replaced by a rename (a reader of the old file
// keeps the old content), the file gets the caller's mode, and a failed write leaves no temporary file.
import { afterAll, describe, expect, test } from "bun:test";
import { closeSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, readSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type AtomicWriteOptions, writeFileAtomic, writeFileAtomicSync } from "../src/atomic-file.ts";

const root = mkdtempSync(join(tmpdir(), "bunlet-atomic-file-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let made = 0;
/** A fresh directory per test, so its listing shows exactly what the write left. */
const dir = () => {
  const d = join(root, `case-${made++}`);
  mkdirSync(d);
  return d;
};

type Write = (path: string, data: string | Uint8Array, opts?: AtomicWriteOptions) => Promise<void>;
const variants: [string, Write][] = [
  ["writeFileAtomic", writeFileAtomic],
  ["writeFileAtomicSync", async (path, data, opts) => writeFileAtomicSync(path, data, opts)],
];

describe.each(variants)("%s", (_name, write) => {
  test("replaces the target by a rename: a reader of the old file still reads the old content", async () => {
    const d = dir();
    const target = join(d, "state.json");
    writeFileSync(target, "old");
    const before = statSync(target).ino;
    const reader = openSync(target, "r");
    try {
      await write(target, '{"new":true}');
      const buf = Buffer.alloc(16);
      expect(buf.subarray(0, readSync(reader, buf, 0, 16, 0)).toString()).toBe("old");
    } finally {
      closeSync(reader);
    }
    expect(readFileSync(target, "utf8")).toBe('{"new":true}');
    expect(statSync(target).ino).not.toBe(before);
    expect(readdirSync(d)).toEqual(["state.json"]);
  });

  test.each([
    ["0600", 0o600],
    ["0640", 0o640],
    ["0644", 0o644],
  ])("the file gets mode %s (less the umask), whatever the old one had", async (_octal, mode) => {
    const d = dir();
    const target = join(d, "checkpoint");
    writeFileSync(target, "old", { mode: 0o604 });
    await write(target, new Uint8Array([1, 2, 3]), { mode });
    expect(statSync(target).mode & 0o777).toBe(mode & ~process.umask());
    expect([...readFileSync(target)]).toEqual([1, 2, 3]);
  });

  test("creates a missing target; the named temporary file and a directory sync leave only the target", async () => {
    const d = dir();
    const target = join(d, "userns");
    await write(target, "x", { tmpPath: join(d, ".userns.tmp"), syncDir: true });
    expect(readFileSync(target, "utf8")).toBe("x");
    expect(readdirSync(d)).toEqual(["userns"]);
  });

  test("a rename that fails throws the file system's error and removes the temporary file", async () => {
    const d = dir();
    const target = join(d, "busy");
    mkdirSync(join(target, "child"), { recursive: true }); // a non-empty directory cannot be renamed over
    const err = await write(target, "x").then(
      () => undefined,
      (e: NodeJS.ErrnoException) => e,
    );
    expect(err?.code).toMatch(/^(EISDIR|ENOTEMPTY|EEXIST)$/);
    expect(readdirSync(d)).toEqual(["busy"]);
  });

  test("a write that fails after the temporary file exists removes it and keeps the old target", async () => {
    const d = dir();
    const target = join(d, "state");
    writeFileSync(target, "old");
    const err = await write(target, 42 as unknown as string).then(
      () => undefined,
      (e: NodeJS.ErrnoException) => e,
    );
    expect(err?.code).toBe("ERR_INVALID_ARG_TYPE");
    expect(readFileSync(target, "utf8")).toBe("old");
    expect(readdirSync(d)).toEqual(["state"]);
  });

  test("a temporary file that cannot be created throws ENOENT and creates nothing", async () => {
    const d = dir();
    const err = await write(join(d, "missing", "state"), "x").then(
      () => undefined,
      (e: NodeJS.ErrnoException) => e,
    );
    expect(err?.code).toBe("ENOENT");
    expect(readdirSync(d)).toEqual([]);
  });
});
