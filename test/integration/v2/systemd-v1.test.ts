// cgroupDriver systemd on cgroup v1 with a real systemd as PID 1: the guest booted with --cgroup-v1
// (systemd's hybrid layout). bunlet's v1 pod cgroup manager starts kubepods.slice, the QoS slices and
// the pod's slice over D-Bus with v1 properties (MemoryLimit, CPUShares, …) and writes the v1 files;
// then dist/bunlet with containerd's runc on its systemd driver runs a pod whose container lands in a
// cri-containerd scope under the pod's slice in the memory hierarchy, with its limit. Runs only in the
// guest (BUNLET_IN_V2_GUEST, via in-guest.test.ts): it uses the real kubepods.slice.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { isUnifiedMount } from "../../../src/pod/cgroups-unified.ts";
import { createQoSCgroupManager } from "../../../src/pod/setup.ts";
import type { Pod } from "../../../src/pod/types.ts";
import { makePod } from "../../pod/fake-runtime.ts";
import { staticPodFlags } from "../../support/agent.ts";
import { ensureBuilt, freePort, killAll, pollUntil, spawnBunlet, waitForHealthz, type BunletProcess } from "../../support/binary.ts";
import { acquireContainerd, removeSandboxes, type TestContainerd } from "../../support/containerd.ts";
import { staticPodYaml } from "../../support/manifests.ts";

const MOUNT = "/sys/fs/cgroup";
const pid1 = (() => {
  try {
    return readFileSync("/proc/1/comm", "utf8").trim();
  } catch {
    return "";
  }
})();
const enabled = !!process.env.BUNLET_IN_V2_GUEST && pid1 === "systemd" && !isUnifiedMount(MOUNT) && existsSync(join(MOUNT, "memory", "cgroup.procs"));
if (!enabled) console.warn("skipping cgroupDriver systemd on cgroup v1: runs in the guest booted with --systemd --cgroup-v1 (in-guest.test.ts)");

const MiB = 2 ** 20;
const KUBEPODS = ["kubepods-burstable.slice", "kubepods-besteffort.slice", "kubepods.slice"];
const show = (unit: string, prop: string) => Bun.spawnSync(["systemctl", "show", "--value", "-p", prop, unit], { stdout: "pipe" }).stdout.toString().trim();
const cg = (...parts: string[]) => readFileSync(join(MOUNT, ...parts), "utf8").trim();
const stopSlices = () => {
  for (const u of KUBEPODS) Bun.spawnSync(["systemctl", "stop", u]);
};

describe.skipIf(!enabled)("cgroupDriver systemd on cgroup v1 (real systemd)", () => {
  afterAll(stopSlices);

  test("the v1 manager over D-Bus: slices with v1 limits, the v1 files, the pod's slice stopped on removal", async () => {
    const config = { cgroupDriver: "systemd", enforceNodeAllocatable: ["pods"], systemReserved: { memory: "200Mi" } } as Parameters<typeof createQoSCgroupManager>[0];
    const m = createQoSCgroupManager(config, MOUNT, { memoryBytes: 1024 * MiB, cpus: 1 })!;
    expect(m).toBeDefined();
    try {
      const uid = `ab-cd-${process.pid}`;
      const podUnit = `kubepods-burstable-podab_cd_${process.pid}.slice`;
      const pod = makePod({ name: "b", uid, containers: [{ name: "c", image: "x", resources: { requests: { cpu: "250m", memory: "32Mi" }, limits: { memory: "64Mi", cpu: "500m" } } }] });
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
      await m.removePod(uid);
      expect(show(podUnit, "ActiveState")).toBe("inactive");
      expect(existsSync(join(MOUNT, "memory", ...podDir))).toBe(false);
    } finally {
      m.close();
      stopSlices();
    }
  }, 120_000);

  describe("dist/bunlet + containerd (runc SystemdCgroup) on v1", () => {
    let ctd: TestContainerd;
    const base = `/tmp/bunlet-v1-systemd-${process.pid}`;
    const manifests = join(base, "manifests");
    const node = `sdv1-${process.pid}`;
    let p: BunletProcess | undefined;
    beforeAll(async () => {
      await ensureBuilt();
      ctd = await acquireContainerd({ systemdCgroup: true });
      mkdirSync(manifests, { recursive: true });
    }, 600_000);
    afterAll(async () => {
      try {
        await p?.stop("SIGTERM", 10_000);
        await killAll();
        if (ctd) await removeSandboxes(ctd.cri, node);
      } finally {
        stopSlices();
        rmSync(base, { recursive: true, force: true });
        await ctd?.release();
      }
    }, 120_000);

    test("the container in a scope under the pod's slice with its v1 memory limit; pod memory in /stats/summary", async () => {
      writeFileSync(
        join(manifests, "g.yaml"),
        staticPodYaml("g", { image: ctd.images.busybox, command: ["sh", "-c", "exec sleep 3600"], terminationGracePeriodSeconds: 1, container: "      resources: { limits: { memory: 48Mi, cpu: 100m } }\n" }),
      );
      const port = freePort();
      p = spawnBunlet([...staticPodFlags({ rootDir: join(base, "root"), manifests, cgroupRoot: "/", endpoint: ctd.endpoint, node, port }), "--file-check-frequency=1s", "--cgroup-driver=systemd"]);
      await waitForHealthz(p, `http://127.0.0.1:${port}/healthz`, 60_000);
      const pod = async () => ((await (await fetch(`http://127.0.0.1:${port}/pods`)).json()) as { items: Pod[] }).items.find((x) => x.metadata.name === `g-${node}`);
      await pollUntil(async () => (await pod())?.status?.phase === "Running", "pod g Running", 120_000, 200);
      const uid = (await pod())!.metadata.uid;
      expect(p.stderr()).toContain("cgroup driver matches the container runtime's cgroupDriver=systemd");
      const podUnit = `kubepods-pod${uid.replaceAll("-", "_")}.slice`; // Guaranteed: directly under kubepods
      const podDir = ["memory", "kubepods.slice", podUnit];
      expect(show(podUnit, "ActiveState")).toBe("active");
      expect(cg(...podDir, "memory.limit_in_bytes")).toBe(String(48 * MiB));
      const scopes = readdirSync(join(MOUNT, ...podDir), { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);
      expect(scopes.length).toBeGreaterThanOrEqual(2);
      for (const s of scopes) expect(s).toMatch(/^cri-containerd-[0-9a-f]{64}\.scope$/);
      expect(scopes.filter((s) => cg(...podDir, s, "memory.limit_in_bytes") === String(48 * MiB)).length).toBe(1);
      await pollUntil(
        async () => {
          const s = (await (await fetch(`http://127.0.0.1:${port}/stats/summary`)).json()) as { pods: { podRef: { name: string }; memory?: { workingSetBytes?: number } }[] };
          return (s.pods.find((x) => x.podRef.name === `g-${node}`)?.memory?.workingSetBytes ?? 0) > 0;
        },
        "pod g memory in /stats/summary",
        30_000,
        200,
      );
    }, 400_000);
  });
});
