// The notifier inside a `bun build --compile` binary: the epoll Worker must be an extra
// entrypoint and be found in the embedded filesystem. Builds a small binary (debug notify only),
// then watches a real test cgroup with it until a child crosses the threshold.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { canManageMemoryCgroups, makeMemoryCgroup, spawnMemoryHog, type TestCgroup } from "../../support/cgroup.ts";

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
    const p = Bun.spawn([bin, "notify", "--cgroup", cg.path, "--threshold", "+24Mi", "--count", "1", "--timeout", "30s"], {
      stdout: "pipe",
      stderr: "pipe",
    });
    procs.push(p);
    // Wait for the "watching" line: the registration is in place before the child allocates.
    const errReader = p.stderr.getReader();
    let errText = "";
    while (!errText.includes("watching")) {
      const { value, done } = await errReader.read();
      if (done) throw new Error(`notify exited before watching: ${errText}`);
      errText += new TextDecoder().decode(value);
    }
    const hog = spawnMemoryHog(cg, 64);
    procs.push(hog);
    const code = await p.exited;
    const out = await new Response(p.stdout).text();
    expect(errText).not.toContain("ModuleNotFound");
    expect(out).toContain(`threshold cgroup=${cg.path}`);
    expect(out).toContain("now=above");
    expect(code).toBe(0);
  }, 60_000);
});
