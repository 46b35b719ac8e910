// The arm64 build (scripts/build.sh --arch arm64 → dist/bunlet-linux-arm64) run on this host: under
// QEMU user-mode emulation through scripts/host/arm64.sh on x86_64, natively on an aarch64 host
// (docs/arm64.md). QEMU hands the syscalls to the host kernel and converts the structs whose layout
// differs between the two architectures, so a binding using the x86_64 layout on arm64 misreads here
// as it would on an arm64 machine. Skipped, with the reason, where qemu-user-static and Debian's
// aarch64 glibc cannot be installed.
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { besteffortHog } from "../../scripts/chaos/besteffort-hog.ts";
import { printResult, runScenario } from "../../scripts/chaos/lib.ts";
import { ensureBuilt, ROOT, runBunlet } from "../support/binary.ts";
import { canManageMemoryCgroups, makeMemoryCgroup, notifyOnHog, type TestCgroup } from "../support/cgroup.ts";
import { useChaosContainerd } from "../support/chaos.ts";
import { canRunContainerd } from "../support/containerd.ts";

const ARM64_SH = join(ROOT, "scripts/host/arm64.sh");
/** `cmd` (an aarch64 executable and its arguments) as this host runs it. */
const onArm64 = (...cmd: string[]) => ["bash", ARM64_SH, "--", ...cmd];

/** Why arm64 programs cannot run here (arm64.sh --check installs what is missing first), or undefined. */
function arm64Unavailable(): string | undefined {
  if (process.platform !== "linux") return "arm64 emulation needs Linux";
  const r = spawnSync("bash", [ARM64_SH, "--check"], { encoding: "utf8", timeout: 600_000 });
  return r.status === 0 ? undefined : r.stderr.trim() || `scripts/host/arm64.sh --check exited ${r.status}`;
}

const unavailable = arm64Unavailable();
if (unavailable) console.warn(`arm64 tests skipped: ${unavailable}`);

describe.skipIf(unavailable !== undefined)("dist/bunlet-linux-arm64", () => {
  let bin = "";
  beforeAll(async () => {
    bin = await ensureBuilt("arm64");
  }, 600_000);

  test("is an aarch64 executable that reports linux/arm64", async () => {
    const elf = new Uint8Array(await Bun.file(bin).slice(0, 20).arrayBuffer());
    expect(new DataView(elf.buffer).getUint16(18, true)).toBe(183); // e_machine EM_AARCH64
    const r = await runBunlet(["version"], { command: onArm64(bin), timeoutMs: 60_000 });
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
    expect(r.stdout).toContain("linux/arm64");
  }, 90_000);

  test("config print renders the effective KubeletConfiguration", async () => {
    const r = await runBunlet(["config", "print", "--output", "json", "--max-pods=17"], { command: onArm64(bin), timeoutMs: 60_000 });
    expect(r.code).toBe(0);
    const cfg = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(cfg.kind).toBe("KubeletConfiguration");
    expect(cfg.maxPods).toBe(17);
  }, 90_000);

  test("the ffi tests pass under the binary's own arm64 Bun (BUN_BE_BUN=1), which picks the arm64 table", () => {
    const r = spawnSync(onArm64(bin)[0]!, [...onArm64(bin).slice(1), "test", "test/ffi"], {
      cwd: ROOT,
      env: { ...process.env, BUN_BE_BUN: "1", NO_COLOR: "1" },
      encoding: "utf8",
      timeout: 120_000,
    });
    const out = `${r.stdout}${r.stderr}`;
    expect(out).toContain("(pass) per-architecture table > the running process uses its own architecture's table");
    expect(out).toContain("(pass) libc > epoll_wait returns several events at their offsets");
    expect(out).toMatch(/\n\s*0 fail\n/);
    expect(r.status).toBe(0);
  }, 150_000);

  describe.skipIf(!canManageMemoryCgroups())("on the kernel (cgroup v1 memory)", () => {
    let cg: TestCgroup | undefined;
    const procs: Bun.Subprocess[] = [];
    afterAll(async () => {
      for (const p of procs) p.kill("SIGKILL");
      await Promise.all(procs.map((p) => p.exited));
      await cg?.remove();
    });

    test("debug notify prints a real memcg threshold crossing", async () => {
      cg = makeMemoryCgroup({ prefix: "bunlet-arm64" });
      const r = await notifyOnHog(onArm64(bin, "debug", "notify", "--cgroup", cg.path, "--threshold", "+24Mi", "--count", "1", "--timeout", "60s"), cg, procs);
      expect(r.stdout).toContain(`threshold cgroup=${cg.path}`);
      expect(r.stdout).toContain("now=above");
      expect(r.code).toBe(0);
    }, 120_000);
  });

  describe.skipIf(!canRunContainerd())("chaos", () => {
    useChaosContainerd({ build: false });

    // The agent is the arm64 binary; containerd, runc and the images stay the host's.
    test("besteffort-hog: the hog is evicted on the kernel's memcg threshold event", async () => {
      const r = await runScenario(besteffortHog, { timeoutMs: 150_000, agentCommand: onArm64(bin) });
      if (!r.pass) printResult(r);
      expect({ error: r.error, failed: r.checks.filter((c) => !c.ok), cleanupProblems: r.cleanupProblems }).toEqual({
        error: undefined,
        failed: [],
        cleanupProblems: [],
      });
      expect(r.trace.map((t) => t.trigger.kind)).toEqual(["kernel"]);
    }, 200_000);
  });
});
