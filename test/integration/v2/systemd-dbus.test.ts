// bunlet's own D-Bus transport (src/pod/systemd-dbus.ts) driving a real systemd for cgroupDriver
// "systemd" on cgroup v2: the pod cgroup manager starts kubepods.slice, kubepods-burstable.slice and
// the pod's slice as transient units, systemd reports them and writes the limits asked for, and
// removal stops the pod's unit. Runs where PID 1 is systemd on a cgroup2 mount — the v2 guest with
// --systemd (in-guest.test.ts); skips elsewhere (it uses the real kubepods.slice name).
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createPodCgroupManager } from "../../../src/pod/cm/container-manager.ts";
import { rootControllers } from "../../../src/pod/cm/cgroup-v2-manager.ts";
import { cgroupDirPath } from "../../../src/pod/cgroups-config.ts";
import { createSystemdDBus } from "../../../src/pod/systemd-dbus.ts";
import { makePod } from "../../pod/fake-runtime.ts";
import { guestGate, MOUNT, systemctlShow as show } from "../../support/guest-node.ts";

const enabled = guestGate("systemd", "systemd D-Bus tests");

describe.skipIf(!enabled)("cgroupDriver systemd over bunlet's D-Bus client (real systemd)", () => {
  const units = enabled ? createSystemdDBus() : undefined;
  const uid = `ab-cd-${process.pid}`;
  const podUnit = `kubepods-burstable-podab_cd_${process.pid}.slice`;
  afterAll(async () => {
    if (!units) return;
    for (const u of [podUnit, "kubepods-burstable.slice", "kubepods-besteffort.slice", "kubepods.slice"]) await units.stopUnit(u).catch(() => undefined);
    units.close();
  });

  test("QoS and pod slices started with their limits; removal stops the pod's unit", async () => {
    const m = createPodCgroupManager({
      mountRoot: MOUNT,
      driver: "systemd",
      systemd: units,
      controllers: rootControllers(MOUNT),
      kubepods: { memoryLimitBytes: 768 * 2 ** 20 },
    });
    const pod = makePod({
      name: "b",
      uid,
      containers: [{ name: "c", image: "x", resources: { requests: { cpu: "250m", memory: "32Mi" }, limits: { memory: "64Mi", cpu: "500m" } } }],
    });

    // The CRI is told the systemd parent as upstream's GetPodCgroupParent: ToSystemd's expanded form.
    const parent = `/kubepods.slice/kubepods-burstable.slice/${podUnit}`;
    expect(await m.ensurePod(pod)).toBe(parent);
    expect(await units!.version()).toBeGreaterThan(200);

    for (const u of ["kubepods.slice", "kubepods-burstable.slice", "kubepods-besteffort.slice", podUnit])
      expect(`${u} ${show(u, "ActiveState")}`).toBe(`${u} active`);
    expect(show(podUnit, "ControlGroup")).toBe(`/kubepods.slice/kubepods-burstable.slice/${podUnit}`);
    expect(show(podUnit, "Wants")).toBe("kubepods-burstable.slice");
    expect(show(podUnit, "MemoryMax")).toBe(String(64 * 2 ** 20));
    expect(show("kubepods.slice", "MemoryMax")).toBe(String(768 * 2 ** 20));

    const podDir = join(MOUNT, cgroupDirPath("systemd", "/", ["kubepods", "burstable", `pod${uid}`]));
    expect(podDir).toBe(join(MOUNT, "kubepods.slice/kubepods-burstable.slice", podUnit));
    const read = (dir: string, f: string) => readFileSync(join(dir, f), "utf8").trim();
    expect(read(podDir, "memory.max")).toBe(String(64 * 2 ** 20));
    expect(read(podDir, "cpu.max")).toBe("50000 100000");
    expect(read(join(MOUNT, "kubepods.slice"), "memory.max")).toBe(String(768 * 2 ** 20));
    expect(await m.listPodUids()).toContain(uid);

    // The burstable weight follows the pod's 250m request (256 shares → CPUWeight 10) as a runtime
    // property of the unit, so a daemon-reload, which makes systemd write its units' values to the
    // cgroups again, keeps it rather than restoring the weight the slice was started with.
    const burstable = join(MOUNT, "kubepods.slice/kubepods-burstable.slice");
    expect(show("kubepods-burstable.slice", "CPUWeight")).toBe("10");
    expect(read(burstable, "cpu.weight")).toBe("10");
    const reload = Bun.spawnSync(["systemctl", "daemon-reload"], { stderr: "pipe" });
    expect(reload.exitCode, reload.stderr.toString()).toBe(0);
    expect(show("kubepods-burstable.slice", "CPUWeight")).toBe("10");
    expect(read(burstable, "cpu.weight")).toBe("10");
    expect(show("kubepods-besteffort.slice", "CPUWeight")).toBe("1");

    // A resync of a known pod starts nothing; an existing unit (bunlet restarted) is accepted.
    await m.ensurePod(pod);
    const again = createPodCgroupManager({ mountRoot: MOUNT, driver: "systemd", systemd: units, controllers: rootControllers(MOUNT) });
    expect(await again.ensurePod(pod)).toBe(parent);

    await m.removePod(uid);
    expect(show(podUnit, "ActiveState")).toBe("inactive");
    expect(show("kubepods-burstable.slice", "CPUWeight")).toBe("1"); // no burstable pod left
    expect(existsSync(podDir)).toBe(false);
    expect(await m.listPodUids()).not.toContain(uid);
  }, 60_000);
});
