// The kernfs EPOLLPRI path (the one memory.events uses on a cgroup v2 memory controller), tested
// on cgroup.events of a cgroup2 directory: "populated" flips when a process enters and leaves.
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, rmdirSync } from "node:fs";
import { join } from "node:path";
import { createNotifierHub, type NotifierHub } from "../../../src/kernel/hub.ts";
import { watchKernfsFile } from "../../../src/kernel/kernfs-watch.ts";
import { UNIFIED_ROOT, removeCgroup, waitFor } from "../../support/cgroup.ts";

const enabled = process.getuid?.() === 0 && existsSync(join(UNIFIED_ROOT, "cgroup.procs"));
if (!enabled) console.warn(`skipping kernfs watch tests: needs root and a cgroup2 mount at ${UNIFIED_ROOT}`);

describe.skipIf(!enabled)("kernfs file watch (EPOLLPRI)", () => {
  let hub: NotifierHub | undefined;
  let dir: string | undefined;
  let child: Bun.Subprocess | undefined;
  afterEach(async () => {
    child?.kill("SIGKILL");
    await child?.exited;
    child = undefined;
    await hub?.close();
    hub = undefined;
    if (dir) await removeCgroup(dir);
    dir = undefined;
  });

  test("cgroup.events changes are delivered, re-armed, and removal is reported", async () => {
    dir = join(UNIFIED_ROOT, `bunlet-test-kernfs-${process.pid}`);
    mkdirSync(dir);
    hub = createNotifierHub();
    const texts: string[] = [];
    let removed: string | undefined;
    const w = watchKernfsFile(hub, { path: join(dir, "cgroup.events"), onChange: (t) => texts.push(t), onRemoved: (p) => (removed = p), removalCheckMs: 20 });
    expect(w.mode).toBe("epollpri");
    expect(w.initial).toContain("populated 0");
    child = Bun.spawn(["sh", "-c", `echo $$ > ${join(dir, "cgroup.procs")} && exec sleep 60`], { stdout: "ignore" });
    await waitFor(() => texts.some((t) => t.includes("populated 1")), "populated 1", 5000);
    child.kill("SIGKILL");
    await child.exited;
    await waitFor(() => texts.at(-1)?.includes("populated 0") === true, "populated 0 (second notification)", 5000);
    rmdirSync(dir);
    await waitFor(() => removed !== undefined, "removal", 5000);
    expect(w.stopped).toBe(true);
    expect(hub.size).toBe(0);
  }, 30_000);
});
