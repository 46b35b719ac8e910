import { afterEach, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { detectMemoryNotification } from "../../src/kernel/detect.ts";

describe("detectMemoryNotification", () => {
  let dir: string | undefined;
  afterEach(() => dir && rmSync(dir, { recursive: true, force: true }));

  test("finds the v1 memory controller and a unified memory.pressure", () => {
    dir = mkdtempSync(join(tmpdir(), `bunlet-detect-${process.pid}-`));
    const mem = join(dir, "memory");
    const uni = join(dir, "unified");
    mkdirSync(mem);
    mkdirSync(uni);
    writeFileSync(join(mem, "cgroup.event_control"), "");
    writeFileSync(join(mem, "memory.usage_in_bytes"), "0\n");
    writeFileSync(join(uni, "memory.pressure"), "");
    expect(detectMemoryNotification({ memoryCgroupRoot: mem, unifiedRoot: uni })).toEqual({
      memcgRoot: mem,
      pressureFile: join(uni, "memory.pressure"),
      missing: [],
    });
  });

  test("explains a missing memory controller", () => {
    dir = mkdtempSync(join(tmpdir(), `bunlet-detect-${process.pid}-`));
    const r = detectMemoryNotification({ memoryCgroupRoot: join(dir, "nope"), unifiedRoot: join(dir, "nope2") });
    expect(r.memcgRoot).toBeUndefined();
    expect(r.missing[0]).toContain(join(dir, "nope"));
  });
});
