// cgroupDriver systemd end to end on cgroup v2: dist/bunlet with --cgroup-driver=systemd and a
// containerd whose runc uses its systemd cgroup driver (SystemdCgroup = true). bunlet starts
// kubepods.slice (node allocatable), the QoS slices and each pod's slice as transient units over D-Bus
// and tells the CRI the pod's slice as cgroup_parent (upstream's expanded form); runc puts every
// container in a cri-containerd-<id>.scope under it, with the container's limits; pod memory reaches
// /stats/summary. First, bunlet with the other driver against that containerd stops at start with an
// error naming both. Runs where PID 1 is systemd on a cgroup2 mount — the v2 guest with --systemd
// (in-guest.test.ts); skips elsewhere (it uses the real kubepods.slice).
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { freePort, pollUntil, runBunlet } from "../../support/binary.ts";
import { cgroupFile as cg, guestGate, memTotalBytes, MiB, MOUNT, systemctlShow as show, useGuestNode } from "../../support/guest-node.ts";
import { staticPodYaml } from "../../support/manifests.ts";

const enabled = guestGate("systemd", "cgroupDriver systemd pod tests");

describe.skipIf(!enabled)("cgroupDriver systemd: bunlet + containerd (runc SystemdCgroup) on cgroup v2", () => {
  const n = useGuestNode({ name: "v2-systemd", node: "sd", systemd: true });

  test("the other driver against this containerd: bunlet stops at start naming both drivers", async () => {
    const r = await runBunlet([...n.flags({ rootDir: "mismatch", port: freePort() }), "--file-check-frequency=1s", "--cgroup-driver=cgroupfs"], {
      timeoutMs: 90_000,
    });
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain('cgroup driver mismatch: bunlet uses cgroupDriver "cgroupfs" but the container runtime uses "systemd"');
    expect(r.stderr).toContain("SystemdCgroup=true");
    // Nothing was created with the wrong driver.
    expect(existsSync(join(MOUNT, "kubepods"))).toBe(false);
  }, 120_000);

  test("slices over D-Bus, containers in scopes under the pod's slice with their limits, memory in /stats/summary", async () => {
    writeFileSync(
      join(n.manifests, "b.yaml"),
      staticPodYaml("b", {
        image: n.ctd.images.busybox,
        command: ["sh", "-c", "exec sleep 3600"],
        terminationGracePeriodSeconds: 1,
        container: "      resources: { requests: { memory: 16Mi, cpu: 50m }, limits: { memory: 48Mi, cpu: 100m } }\n",
      }),
    );
    const p = await n.start([...n.flags(), "--file-check-frequency=1s", "--cgroup-driver=systemd", "--system-reserved=memory=100Mi"]);
    const uid = await n.waitRunning("b");
    expect(p.stderr()).toContain("cgroup driver matches the container runtime's cgroupDriver=systemd");

    const memTotal = memTotalBytes();
    // kubepods.slice = node allocatable, as systemd's unit and in the kernel.
    expect(show("kubepods.slice", "ActiveState")).toBe("active");
    expect(cg("kubepods.slice", "memory.max")).toBe(String(memTotal - 100 * MiB));
    expect(show("kubepods.slice", "MemoryMax")).toBe(String(memTotal - 100 * MiB));

    const podUnit = `kubepods-burstable-pod${uid.replaceAll("-", "_")}.slice`;
    const podDir = ["kubepods.slice", "kubepods-burstable.slice", podUnit];
    expect(show(podUnit, "ActiveState")).toBe("active");
    expect(show(podUnit, "ControlGroup")).toBe(`/${podDir.join("/")}`);
    expect(cg(...podDir, "memory.max")).toBe(String(48 * MiB));
    expect(cg(...podDir, "cpu.max")).toBe("10000 100000");
    expect(cg(...podDir, "cpu.weight")).toBe("2"); // 51 shares

    // runc's systemd driver: the sandbox and the container as scopes of the pod's slice.
    const scopes = readdirSync(join(MOUNT, ...podDir), { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name);
    expect(scopes.length).toBeGreaterThanOrEqual(2);
    for (const s of scopes) expect(s).toMatch(/^cri-containerd-[0-9a-f]{64}\.scope$/);
    const limited = scopes.filter((s) => cg(...podDir, s, "memory.max") === String(48 * MiB));
    expect(limited.length).toBe(1);
    expect(show(limited[0]!, "Slice")).toBe(podUnit);
    // The container's processes really are there.
    expect(cg(...podDir, limited[0]!, "cgroup.procs").length).toBeGreaterThan(0);

    await n.waitPodMemory("b");

    // The pod removed: its slice stopped (and its cgroup gone).
    rmSync(join(n.manifests, "b.yaml"));
    await pollUntil(async () => show(podUnit, "ActiveState") === "inactive" && !existsSync(join(MOUNT, ...podDir)), "pod slice stopped", 120_000, 200);
  }, 400_000);
});
