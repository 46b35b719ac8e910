// The systemd driver's transient slices (src/pod/systemd-slices.ts) accepted by a real systemd on
// cgroup v2: each unit is sent with `busctl call … StartTransientUnit` (a transport independent of
// bunlet's own D-Bus client, which systemd-dbus.test.ts covers) and the kernel files systemd writes are checked. Runs where PID 1 is
// systemd on a cgroup2 mount — the v2 guest with --systemd (in-guest.test.ts); skips elsewhere.
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { cgroupDirPath } from "../../../src/pod/cgroups-config.ts";
import { transientSlice, type TransientUnit, type UnitProperty } from "../../../src/pod/systemd-slices.ts";
import { until } from "../../support/wait.ts";
import { guestGate, MOUNT } from "../../support/guest-node.ts";

const enabled = guestGate("systemd", "systemd slice tests");

/** busctl's text form of a property: NAME SIGNATURE VALUE… */
function busctlProperty(p: UnitProperty): string[] {
  if (p.signature === "as") return [p.name, "as", String(p.value.length), ...p.value];
  return [p.name, p.signature, String(p.value)];
}

function busctl(...args: string[]): string {
  const r = Bun.spawnSync(
    ["busctl", "--system", "call", "--", "org.freedesktop.systemd1", "/org/freedesktop/systemd1", "org.freedesktop.systemd1.Manager", ...args],
    { stdout: "pipe", stderr: "pipe" },
  );
  if (r.exitCode !== 0) throw new Error(`busctl ${args.slice(0, 3).join(" ")}: ${r.stderr.toString()}`);
  return r.stdout.toString();
}

function startTransientUnit(u: TransientUnit): void {
  busctl("StartTransientUnit", "ssa(sv)a(sa(sv))", u.name, u.mode, String(u.properties.length), ...u.properties.flatMap(busctlProperty), "0");
}

describe.skipIf(!enabled)("systemd transient slices on cgroup v2 (real systemd)", () => {
  // A unique top-level name, so a real node's kubepods.slice is never touched.
  const top = `bunlettest${process.pid}`;
  const started: string[] = [];
  afterAll(() => {
    for (const unit of started.reverse()) {
      try {
        busctl("StopUnit", "ss", unit, "replace");
      } catch {}
    }
  });

  test("QoS and pod slices with their limits, nested as the driver names them", async () => {
    const levels: [string[], Parameters<typeof transientSlice>[1]][] = [
      [[top], { memoryLimitBytes: 512 * 2 ** 20, cpuShares: 1024, pidsLimit: 4096 }],
      [[top, "burstable"], { cpuShares: 256 }],
      [[top, "burstable", "podab-cd"], { memoryLimitBytes: 64 * 2 ** 20, cpuShares: 102, cpuQuotaUs: 50_000, cpuPeriodUs: 100_000, pidsLimit: 64 }],
    ];
    for (const [name, cfg] of levels) {
      const u = transientSlice(name, cfg, { systemdVersion: 252 }); // the guest's Debian 12 systemd
      startTransientUnit(u);
      started.push(u.name);
    }
    const podDir = join(MOUNT, cgroupDirPath("systemd", "/", [top, "burstable", "podab-cd"]));
    expect(podDir).toBe(join(MOUNT, `${top}.slice/${top}-burstable.slice/${top}-burstable-podab_cd.slice`));
    const read = (dir: string, f: string) => readFileSync(join(dir, f), "utf8").trim();
    // systemd writes a new slice's attributes one by one after its cgroup appears (TasksMax among the last).
    await until("the pod slice's limits applied", () => existsSync(join(podDir, "pids.max")) && read(podDir, "pids.max") !== "max", 20_000, {
      intervalMs: 50,
    });
    expect(read(podDir, "memory.max")).toBe(String(64 * 2 ** 20));
    expect(read(podDir, "cpu.weight")).toBe("4");
    expect(read(podDir, "cpu.max")).toBe("50000 100000");
    expect(read(podDir, "pids.max")).toBe("64");
    const topDir = join(MOUNT, `${top}.slice`);
    expect(read(topDir, "memory.max")).toBe(String(512 * 2 ** 20));
    expect(read(topDir, "cpu.weight")).toBe("39");
    expect(read(topDir, "pids.max")).toBe("4096");
    expect(read(join(topDir, `${top}-burstable.slice`), "cpu.weight")).toBe("10");
  }, 60_000);
});
