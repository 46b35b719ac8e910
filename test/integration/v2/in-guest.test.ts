// Runs the real-kernel cgroup v2 test files inside the v2 guest, so `bun test` on a cgroup v1 host
// (this machine, CI) still proves them: each file's own pass/fail is this test's verdict.
import { describe, expect, test } from "bun:test";
import { ensureBuilt } from "../../support/binary.ts";
import { bunTestInV2Guest, v2GuestSkipReason } from "../../support/v2-guest.ts";

const skip = v2GuestSkipReason();

/**
 * Files that need a real cgroup v2 kernel (and systemd as PID 1: "systemd"; "systemd-v1": systemd on the
 * guest's cgroup v1 hybrid layout); they skip themselves elsewhere.
 */
const GUEST_FILES: [string, "busybox-init" | "systemd" | "systemd-v1"][] = [
  ["test/integration/v2/qos-cgroups.test.ts", "busybox-init"],
  ["test/integration/v2/memory-events.test.ts", "busybox-init"],
  ["test/integration/v2/working-set-fast.test.ts", "busybox-init"],
  ["test/integration/v2/pods.test.ts", "busybox-init"],
  ["test/integration/v2/eviction.test.ts", "busybox-init"],
  ["test/integration/v2/stats.test.ts", "busybox-init"],
  ["test/integration/v2/systemd-slices.test.ts", "systemd"],
  ["test/integration/v2/systemd-dbus.test.ts", "systemd"],
  ["test/integration/v2/systemd-pods.test.ts", "systemd"],
  ["test/integration/v2/shutdown-logind.test.ts", "systemd"],
  ["test/integration/v2/systemd-v1.test.ts", "systemd-v1"],
];

describe.skipIf(!!skip)("cgroup v2 tests inside the guest", () => {
  test.each(GUEST_FILES)("%s passes in the guest (%s)", async (file, init) => {
    // pods/eviction run containerd and dist/bunlet (built here first: the guest's writes vanish).
    await ensureBuilt();
    const r = await bunTestInV2Guest(file, { memoryMiB: 1536, timeoutS: 560, systemd: init !== "busybox-init", cgroupV1: init === "systemd-v1" });
    const summary = `${r.stdout}\n${r.stderr}`;
    expect(r.exitCode, summary).toBe(0);
    // The file must really have run there, not skipped.
    expect(summary).not.toMatch(/^\s*[1-9]\d* skip$/m);
    expect(summary).toMatch(/^\s*[1-9]\d* pass$/m);
  }, 600_000);
});
