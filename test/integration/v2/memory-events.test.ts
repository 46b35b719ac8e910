// Real cgroup v2 memory notifications firing on a real kernel (not just registered): memory.events
// reporting a memory.max OOM kill, and a PSI trigger on a cgroup's memory.pressure waking up when its
// process stalls on memory.high. Runs where /sys/fs/cgroup is a cgroup2 mount and we are root — the v2
// guest (in-guest.test.ts) or a v2 host; skips on a v1 host. PSI needs a kernel with CONFIG_PSI.
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createNotifierHub, type NotifierHub } from "../../../src/kernel/hub.ts";
import { watchMemoryEvents, type MemoryEventsEvent } from "../../../src/kernel/memory-events.ts";
import { startPsiNotifier, type PsiEvent } from "../../../src/kernel/psi.ts";
import { removeCgroupDir } from "../../../src/pod/cm/cgroup-manager.ts";
import { until } from "../../support/wait.ts";
import { guestGate, MOUNT } from "../../support/guest-node.ts";

const onV2 = guestGate("cgroup2", "real cgroup v2 notification tests");
const havePsi = onV2 && existsSync(join(MOUNT, "cpu.pressure"));
if (onV2 && !havePsi) console.warn("skipping the PSI trigger test: this kernel has no PSI (CONFIG_PSI off or psi=0)");

const MiB = 2 ** 20;
let n = 0;

describe.skipIf(!onV2)("cgroup v2 memory notifications (real kernel)", () => {
  let hub: NotifierHub | undefined;
  let hog: Bun.Subprocess | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    hog?.kill("SIGKILL");
    await hog?.exited;
    hog = undefined;
    await hub?.close();
    hub = undefined;
    if (dir) await removeCgroupDir(dir);
    dir = undefined;
  });

  /** A fresh cgroup with memory enabled by the root, limits written, a `tail /dev/zero` hog inside (it grows until stopped). */
  function cgroupWithHog(limits: Record<string, string>): string {
    writeFileSync(join(MOUNT, "cgroup.subtree_control"), "+memory");
    dir = join(MOUNT, `bunlet-v2-notify-${process.pid}-${++n}`);
    mkdirSync(dir);
    for (const [file, value] of Object.entries(limits)) writeFileSync(join(dir, file), value);
    // No swap for the hog where the kernel has swap accounting (the guest has no swap at all).
    if (existsSync(join(dir, "memory.swap.max"))) writeFileSync(join(dir, "memory.swap.max"), "0");
    return dir;
  }
  const startHog = (d: string) => (hog = Bun.spawn(["sh", "-c", `echo $$ > ${d}/cgroup.procs && exec tail /dev/zero`], { stdout: "ignore", stderr: "ignore" }));

  test("memory.events reports the OOM kill at memory.max, through the kernel's notification", async () => {
    const d = cgroupWithHog({ "memory.max": String(32 * MiB) });
    hub = createNotifierHub();
    const events: MemoryEventsEvent[] = [];
    const w = watchMemoryEvents(hub, { path: join(d, "memory.events"), onEvent: (e) => events.push(e) });
    expect(w.mode).toBe("epollpri");
    const p = startHog(d);
    await p.exited;
    expect(p.signalCode).toBe("SIGKILL");
    const ev = await until("an oom_kill in memory.events", () => events.find((e) => (e.delta.oom_kill ?? 0) > 0), 20_000, { intervalMs: 20 });
    expect(ev.counters.max).toBeGreaterThanOrEqual(1);
    expect(ev.counters.oom_kill).toBeGreaterThanOrEqual(1);
  }, 60_000);

  test.skipIf(!havePsi)(
    "a PSI trigger on the cgroup's memory.pressure fires when its process stalls at memory.high",
    async () => {
      // memory.high throttles (reclaim + penalty sleeps, counted as memory stall); memory.max is the backstop.
      const d = cgroupWithHog({ "memory.high": String(16 * MiB), "memory.max": String(96 * MiB) });
      hub = createNotifierHub();
      const psi: PsiEvent[] = [];
      const highs: MemoryEventsEvent[] = [];
      let refused: string | undefined;
      const notifier = startPsiNotifier(hub, {
        path: join(d, "memory.pressure"),
        trigger: "some 50000 1000000", // 50 ms of stall within 1 s
        onEvent: (e) => psi.push(e),
        onUnsupported: (e, hint) => (refused = `${e.message}: ${hint}`),
      });
      expect(refused).toBeUndefined();
      expect(notifier.mode).toBe("kernel");
      watchMemoryEvents(hub, { path: join(d, "memory.events"), onEvent: (e) => (e.delta.high ? highs.push(e) : undefined) });
      startHog(d);
      const ev = await until("the PSI trigger", () => psi[0], 30_000, { intervalMs: 20 });
      expect(ev.source).toBe("kernel");
      expect(ev.pressure?.some.total).toBeGreaterThanOrEqual(50_000);
      await until("memory.events high", () => highs[0], 10_000, { intervalMs: 20 });
    },
    60_000,
  );
});
