// machine test: root and real memory cgroups (test/support/cgroup.ts)
// A connection flood can take every fd, and an eviction manager that opens its files would then fail
// to read memory stats (EMFILE). The pressure path's cgroup files are kept open (stats/kept-files.ts), so a
// process out of fds still observes memory. Run in a child process with a low RLIMIT_NOFILE.
import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { createKeptFiles } from "../../src/stats/kept-files.ts";
import { canManageMemoryCgroups, makeMemoryCgroup, MEMORY_ROOT, spawnMemoryHog, type TestCgroup } from "../support/cgroup.ts";
import { runFdFixture } from "../support/cgroup.ts";

describe.skipIf(!canManageMemoryCgroups())("kept files on cgroupfs (no fstat per read)", () => {
  let cg: TestCgroup | undefined;
  afterAll(async () => {
    await cg?.remove();
  });
  test("a removed cgroup's kept file fails with ENOENT (ENODEV on read, then the path is gone); other cgroups read on", async () => {
    cg = makeMemoryCgroup({ prefix: "bunlet-kept" });
    const f = createKeptFiles();
    const p = join(cg.path, "memory.limit_in_bytes");
    expect(f.read(p).trim()).toBe(String(512 * 1024 * 1024));
    await cg.remove();
    expect(() => f.read(p)).toThrow(expect.objectContaining({ code: "ENOENT" }));
    cg = makeMemoryCgroup({ prefix: "bunlet-kept", limitBytes: 64 * 1024 * 1024 });
    const q = join(cg.path, "memory.limit_in_bytes");
    expect(f.read(q).trim()).toBe(String(64 * 1024 * 1024));
    f.close();
  });
});

describe.skipIf(!canManageMemoryCgroups())("eviction stats out of file descriptors", () => {
  let cg: TestCgroup | undefined;
  afterAll(async () => {
    await cg?.remove();
  });

  test("a connection flood exhausts the fds (EMFILE); node and pods memory are still read", async () => {
    cg = makeMemoryCgroup({ prefix: "bunlet-kubepods", limitBytes: 256 * 2 ** 20 });
    const hog = spawnMemoryHog(cg, 32);
    try {
      const reader = hog.stdout.getReader();
      await reader.read(); // "ready"
      const rel = cg.path.slice(MEMORY_ROOT.length + 1);
      const r = await runFdFixture<{
        emfile: boolean;
        connections: number;
        before: { node?: number; pods?: number };
        during: { node?: number; pods?: number; podsLimit: number };
      }>(join(import.meta.dir, "fixtures", "fd-flood.ts"), [rel]);
      expect(r.emfile).toBe(true);
      expect(r.connections).toBeGreaterThan(50);
      expect(r.before.pods!).toBeGreaterThan(30 * 2 ** 20);
      expect(r.during.node).toBeGreaterThan(0);
      expect(r.during.pods!).toBeGreaterThan(30 * 2 ** 20);
      expect(r.during.podsLimit).toBe(256 * 2 ** 20);
    } finally {
      hog.kill("SIGKILL");
      await hog.exited;
    }
  });
});
