// The notifier inside a `bun build --compile` binary: the epoll Worker must be an extra
// entrypoint and be found in the embedded filesystem. Builds a small binary (debug notify only),
// then watches a real test cgroup with it until a child crosses the threshold.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { canManageMemoryCgroups, makeMemoryCgroup, notifyOnHog, type TestCgroup } from "../../support/cgroup.ts";

const REPO = resolve(import.meta.dir, "../../..");
const enabled = canManageMemoryCgroups();

describe.skipIf(!enabled)("notifier in a compiled binary", () => {
  let dir: string;
  let bin: string;
  let cg: TestCgroup | undefined;
  const procs: Bun.Subprocess[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), `bunlet-compiled-${process.pid}-`));
    bin = join(dir, "notify");
    const build = Bun.spawn(
      [process.execPath, "build", "--compile", join(import.meta.dir, "fixtures/notify-entry.ts"), join(REPO, "src/kernel/epoll-worker.ts"), "--outfile", bin],
      { cwd: REPO, stdout: "pipe", stderr: "pipe" },
    );
    const [code, err] = await Promise.all([build.exited, new Response(build.stderr).text()]);
    if (code !== 0) throw new Error(`bun build --compile failed (${code}): ${err}`);
  }, 120_000);

  afterAll(async () => {
    for (const p of procs) {
      p.kill("SIGKILL");
      await p.exited;
    }
    await cg?.remove();
    rmSync(dir, { recursive: true, force: true });
  });

  test("debug notify prints a threshold crossing and exits after --count", async () => {
    cg = makeMemoryCgroup();
    const r = await notifyOnHog([bin, "notify", "--cgroup", cg.path, "--threshold", "+24Mi", "--count", "1", "--timeout", "30s"], cg, procs);
    expect(r.stderr).not.toContain("ModuleNotFound");
    expect(r.stdout).toContain(`threshold cgroup=${cg.path}`);
    expect(r.stdout).toContain("now=above");
    expect(r.code).toBe(0);
  }, 60_000);
});
