// PSI triggers on the cgroup2 hierarchy (/sys/fs/cgroup/unified). The kernel grants arbitrary
// windows only with CAP_SYS_RESOURCE; without it windows must be multiples of 2 s, which is what
// we register here so the registration itself is tested on any such host.
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, rmdirSync } from "node:fs";
import { join } from "node:path";
import type { SyscallError } from "../../../ffi/libc.ts";
import { createNotifierHub, type NotifierHub } from "../../../src/kernel/hub.ts";
import { hasCapSysResource, startPsiNotifier, type PsiNotifier } from "../../../src/kernel/psi.ts";
import { UNIFIED_ROOT, waitFor } from "../../support/cgroup.ts";

const ROOT_PRESSURE = join(UNIFIED_ROOT, "memory.pressure");
const havePsi = existsSync(ROOT_PRESSURE);
if (!havePsi) console.warn(`skipping PSI trigger tests: ${ROOT_PRESSURE} does not exist (kernel without CONFIG_PSI or psi=0, or no cgroup2 mount there)`);
const isRoot = process.getuid?.() === 0;

describe.skipIf(!havePsi)("PSI trigger notifier", () => {
  let hub: NotifierHub | undefined;
  const notifiers: PsiNotifier[] = [];
  const dirs: string[] = [];
  afterEach(async () => {
    for (const n of notifiers.splice(0)) n.stop();
    await hub?.close();
    hub = undefined;
    for (const d of dirs.splice(0)) if (existsSync(d)) rmdirSync(d);
  });

  test("registers a kernel trigger on the unified root's memory.pressure", () => {
    hub = createNotifierHub();
    let refused: string | undefined;
    const n = startPsiNotifier(hub, {
      path: ROOT_PRESSURE,
      trigger: "some 150000 2000000",
      onEvent() {},
      onUnsupported: (e, hint) => (refused = `${e.message}: ${hint}`),
    });
    notifiers.push(n);
    // If this fails, `refused` says why the kernel rejected the trigger.
    expect(refused).toBeUndefined();
    expect(n.mode).toBe("kernel");
    expect(hub.size).toBe(1);
  });

  test.skipIf(hasCapSysResource())("a sub-2 s window without CAP_SYS_RESOURCE is reported once and polled", () => {
    hub = createNotifierHub();
    const refusals: Array<{ code: string; hint: string }> = [];
    const n = startPsiNotifier(hub, {
      path: ROOT_PRESSURE,
      trigger: "some 150000 1000000",
      onEvent() {},
      onUnsupported: (e: SyscallError, hint) => refusals.push({ code: e.code, hint }),
    });
    notifiers.push(n);
    expect(n.mode).toBe("poll");
    expect(refusals).toEqual([{ code: "EINVAL", hint: expect.stringContaining("CAP_SYS_RESOURCE") }]);
    expect(hub.size).toBe(0);
  });

  test.skipIf(!isRoot)(
    "a watched cgroup2 directory removed → removal reported, fd released",
    async () => {
      hub = createNotifierHub();
      const dir = join(UNIFIED_ROOT, `bunlet-test-psi-${process.pid}`);
      mkdirSync(dir);
      dirs.push(dir);
      let removed: string | undefined;
      const n = startPsiNotifier(hub, {
        path: join(dir, "memory.pressure"),
        trigger: "some 100000 2000000",
        onEvent() {},
        onRemoved: (p) => (removed = p),
      });
      notifiers.push(n);
      expect(n.mode).toBe("kernel");
      rmdirSync(dir);
      await waitFor(() => removed !== undefined, "removal report", 5000);
      expect(n.stopped).toBe(true);
      expect(hub.size).toBe(0);
    },
    30_000,
  );
});
