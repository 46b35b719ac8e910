// cgroupDriver systemd on cgroup v1 with a real systemd as PID 1: the guest booted with --cgroup-v1
// (systemd's hybrid layout). bunlet's v1 pod cgroup manager starts kubepods.slice, the QoS slices and
// the pod's slice over D-Bus with v1 properties (MemoryLimit, CPUShares, …) and writes the v1 files;
// then dist/bunlet with containerd's runc on its systemd driver runs a pod whose container lands in a
// cri-containerd scope under the pod's slice in the memory hierarchy, with its limit. Runs only in the
// guest (BUNLET_IN_V2_GUEST, via in-guest.test.ts): it uses the real kubepods.slice.
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createQoSCgroupManager } from "../../../src/pod/setup.ts";
import { makePod } from "../../pod/fake-runtime.ts";
import {
  cgroupFile as cg,
  guestGate,
  KUBEPODS_SLICES as KUBEPODS,
  MiB,
  MOUNT,
  systemctlShow as show,
  stopKubepodsSlices as stopSlices,
  useGuestNode,
} from "../../support/guest-node.ts";
import { staticPodYaml } from "../../support/manifests.ts";

const enabled = guestGate("systemd-v1", "cgroupDriver systemd on cgroup v1");

describe.skipIf(!enabled)("cgroupDriver systemd on cgroup v1 (real systemd)", () => {
  afterAll(stopSlices);

  test("the v1 manager over D-Bus: slices with v1 limits, the v1 files, the pod's slice stopped on removal", async () => {
    const config = { cgroupDriver: "systemd", enforceNodeAllocatable: ["pods"], systemReserved: { memory: "200Mi" } } as Parameters<
      typeof createQoSCgroupManager
    >[0];
    const m = createQoSCgroupManager(config, MOUNT, { memoryBytes: 1024 * MiB, cpus: 1 })!;
    expect(m).toBeDefined();
    try {
      const uid = `ab-cd-${process.pid}`;
      const podUnit = `kubepods-burstable-podab_cd_${process.pid}.slice`;
      const pod = makePod({
        name: "b",
        uid,
        containers: [{ name: "c", image: "x", resources: { requests: { cpu: "250m", memory: "32Mi" }, limits: { memory: "64Mi", cpu: "500m" } } }],
      });
      expect(await m.ensurePod(pod)).toBe(`/kubepods.slice/kubepods-burstable.slice/${podUnit}`);
      for (const u of [...KUBEPODS, podUnit]) expect(`${u} ${show(u, "ActiveState")}`).toBe(`${u} active`);
      expect(show(podUnit, "ControlGroup")).toBe(`/kubepods.slice/kubepods-burstable.slice/${podUnit}`);
      expect(show(podUnit, "MemoryLimit")).toBe(String(64 * MiB));
      expect(show(podUnit, "CPUShares")).toBe("256");
      const podDir = ["kubepods.slice", "kubepods-burstable.slice", podUnit];
      expect(cg("memory", ...podDir, "memory.limit_in_bytes")).toBe(String(64 * MiB));
      expect(cg("cpu", ...podDir, "cpu.shares")).toBe("256");
      expect(cg("cpu", ...podDir, "cpu.cfs_quota_us")).toBe("50000");
      expect(cg("memory", "kubepods.slice", "memory.limit_in_bytes")).toBe(String(824 * MiB));
      expect(await m.listPodUids()).toContain(uid);
      // The burstable shares (the pod's 250m) as a runtime unit property: a daemon-reload keeps them.
      expect(show("kubepods-burstable.slice", "CPUShares")).toBe("256");
      const reload = Bun.spawnSync(["systemctl", "daemon-reload"], { stderr: "pipe" });
      expect(reload.exitCode, reload.stderr.toString()).toBe(0);
      expect(show("kubepods-burstable.slice", "CPUShares")).toBe("256");
      expect(cg("cpu", "kubepods.slice", "kubepods-burstable.slice", "cpu.shares")).toBe("256");
      await m.removePod(uid);
      expect(show(podUnit, "ActiveState")).toBe("inactive");
      expect(existsSync(join(MOUNT, "memory", ...podDir))).toBe(false);
    } finally {
      m.close();
      stopSlices();
    }
  }, 120_000);

  describe("dist/bunlet + containerd (runc SystemdCgroup) on v1", () => {
    const n = useGuestNode({ name: "v1-systemd", node: "sdv1", systemd: true });

    test("the container in a scope under the pod's slice with its v1 memory limit; pod memory in /stats/summary", async () => {
      writeFileSync(
        join(n.manifests, "g.yaml"),
        staticPodYaml("g", {
          image: n.ctd.images.busybox,
          command: ["sh", "-c", "exec sleep 3600"],
          terminationGracePeriodSeconds: 1,
          container: "      resources: { limits: { memory: 48Mi, cpu: 100m } }\n",
        }),
      );
      const p = await n.start([...n.flags(), "--file-check-frequency=1s", "--cgroup-driver=systemd"]);
      const uid = await n.waitRunning("g");
      expect(p.stderr()).toContain("cgroup driver matches the container runtime's cgroupDriver=systemd");
      const podUnit = `kubepods-pod${uid.replaceAll("-", "_")}.slice`; // Guaranteed: directly under kubepods
      const podDir = ["memory", "kubepods.slice", podUnit];
      expect(show(podUnit, "ActiveState")).toBe("active");
      expect(cg(...podDir, "memory.limit_in_bytes")).toBe(String(48 * MiB));
      const scopes = readdirSync(join(MOUNT, ...podDir), { withFileTypes: true })
        .filter((e) => e.isDirectory())
        .map((e) => e.name);
      expect(scopes.length).toBeGreaterThanOrEqual(2);
      for (const s of scopes) expect(s).toMatch(/^cri-containerd-[0-9a-f]{64}\.scope$/);
      expect(scopes.filter((s) => cg(...podDir, s, "memory.limit_in_bytes") === String(48 * MiB)).length).toBe(1);
      await n.waitPodMemory("g");
    }, 400_000);
  });
});
