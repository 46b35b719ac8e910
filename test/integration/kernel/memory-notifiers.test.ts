// The agent-facing bundle: memcg targets from the eviction manager → kernel events → onTrigger.
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { startMemoryNotifiers, type MemoryNotifiers } from "../../../src/kernel/memory-notifiers.ts";
import { canManageMemoryCgroups, makeMemoryCgroup, spawnMemoryHog, UNIFIED_ROOT, waitFor, type TestCgroup } from "../../support/cgroup.ts";

const MiB = 1024 * 1024;
const enabled = canManageMemoryCgroups();

function captureLogger() {
  const lines: string[] = [];
  return {
    lines,
    logger: { info: (m: string) => lines.push(`I ${m}`), warn: (m: string) => lines.push(`W ${m}`), debug: (m: string) => lines.push(`D ${m}`) },
  };
}

describe.skipIf(!enabled)("startMemoryNotifiers", () => {
  let kn: MemoryNotifiers | undefined;
  const cgroups: TestCgroup[] = [];
  const children: Bun.Subprocess[] = [];
  afterEach(async () => {
    for (const c of children.splice(0)) {
      c.kill("SIGKILL");
      await c.exited;
    }
    await kn?.close();
    kn = undefined;
    for (const cg of cgroups.splice(0)) await cg.remove();
  });

  test("memcg targets from the eviction manager arm thresholds whose crossing calls onTrigger", async () => {
    const root = makeMemoryCgroup();
    const pods = makeMemoryCgroup({ root: root.path, prefix: "kubepods" });
    cgroups.push(pods, root);
    const { lines, logger } = captureLogger();
    const reasons: string[] = [];
    kn = startMemoryNotifiers({
      memoryCgroupRoot: root.path,
      podsCgroup: pods.path.slice(root.path.length + 1),
      psiTrigger: false,
      onTrigger: (r) => reasons.push(r),
      logger,
    });
    expect(kn.memcgSupported).toBe(true);
    const usage = Number(root.read("memory.usage_in_bytes"));
    await kn.apply([
      { signal: "memory.available", cgroup: "root", hard: true, description: "hard memory eviction threshold", thresholdBytes: usage + 24 * MiB },
      {
        signal: "allocatableMemory.available",
        cgroup: "pods",
        hard: false,
        description: "soft allocatable memory eviction threshold",
        thresholdBytes: 480 * MiB,
      },
    ]);
    expect(kn.hub.size).toBe(2);
    const hog = spawnMemoryHog(pods, 48);
    children.push(hog);
    await waitFor(() => reasons.includes("hard memory eviction threshold"), "root threshold trigger", 10_000);
    expect(reasons).not.toContain("soft allocatable memory eviction threshold");
    // Logged after the trigger (on a later tick: the cycle and its kill go first).
    await waitFor(
      () => lines.some((l) => l.startsWith("I eviction manager: hard memory eviction threshold crossed") && l.includes(`cgroup=${root.path}`)),
      "the crossed line",
      5_000,
    );
  }, 30_000);

  test("errors arming a target are logged once, not every refresh", async () => {
    const root = makeMemoryCgroup();
    cgroups.push(root);
    const { lines, logger } = captureLogger();
    kn = startMemoryNotifiers({ memoryCgroupRoot: root.path, podsCgroup: "no-such-kubepods", psiTrigger: false, onTrigger() {}, logger });
    const t = {
      signal: "allocatableMemory.available" as const,
      cgroup: "pods" as const,
      hard: true,
      description: "hard allocatable memory eviction threshold",
      thresholdBytes: MiB,
    };
    await kn.apply([t]);
    await kn.apply([t]);
    const warns = lines.filter((l) => l.startsWith("W eviction manager: memcg notifier not armed"));
    expect(warns.length).toBe(1);
    expect(warns[0]).toContain("no-such-kubepods");
    expect(warns[0]).toContain("ENOENT");
  });

  test.skipIf(!existsSync(`${UNIFIED_ROOT}/memory.pressure`))("an explicit PSI trigger is armed on the unified memory.pressure", () => {
    const { lines, logger } = captureLogger();
    kn = startMemoryNotifiers({ psiTrigger: "some 150000 2000000", onTrigger() {}, logger });
    expect(kn.psi?.mode).toBe("kernel");
    expect(lines.some((l) => l.startsWith("I kernel memory notification: PSI trigger armed") && l.includes("mode=kernel"))).toBe(true);
  });
});
