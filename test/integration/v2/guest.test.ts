// The cgroup v2 guest itself: a cgroup2-only hierarchy with the controllers kubelet needs and PSI,
// the command's output and exit code passed back, systemd bootable as PID 1.
import { describe, expect, test } from "bun:test";
import { runInV2Guest, v2GuestSkipReason } from "../../support/v2-guest.ts";

const skip = v2GuestSkipReason();

describe.skipIf(!!skip)("v2 guest (scripts/host/v2-guest.sh)", () => {
  test("cgroup v2 with memory, cpu, io and pids enabled at the root, and PSI", async () => {
    const r = await runInV2Guest([
      "sh",
      "-c",
      "cat /sys/fs/cgroup/cgroup.controllers /sys/fs/cgroup/cgroup.subtree_control; stat -fc %T /sys/fs/cgroup; head -1 /proc/pressure/memory",
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    const [controllers = "", subtree = "", fsType = "", psi = ""] = r.stdout.split("\n");
    for (const c of ["memory", "cpu", "io", "pids"]) {
      expect(controllers.split(" ")).toContain(c);
      expect(subtree.split(" ")).toContain(c);
    }
    expect(fsType).toBe("cgroup2fs");
    expect(psi).toMatch(/^some avg10=/);
  }, 300_000);

  test("stdout, stderr and the exit code come back", async () => {
    const r = await runInV2Guest(["bash", "-c", "echo to-stdout; echo to-stderr >&2; exit 7"]);
    expect(r.exitCode).toBe(7);
    expect(r.stdout).toBe("to-stdout\n");
    expect(r.stderr).toContain("to-stderr\n");
  }, 300_000);

  test("--systemd boots systemd as PID 1 with D-Bus and logind", async () => {
    const r = await runInV2Guest(
      [
        "bash",
        "-c",
        "cat /proc/1/comm; cat /proc/self/cgroup; busctl --system --no-pager --no-legend list | awk '{print $1}' | grep -x org.freedesktop.login1",
      ],
      { systemd: true },
    );
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout.split("\n").slice(0, 3)).toEqual(["systemd", "0::/system.slice/v2-guest-command.service", "org.freedesktop.login1"]);
  }, 300_000);
});
