// cgroupDriver systemd end to end on cgroup v2: dist/bunlet with --cgroup-driver=systemd and a
// containerd whose runc uses its systemd cgroup driver (SystemdCgroup = true). bunlet starts
// kubepods.slice (node allocatable), the QoS slices and each pod's slice as transient units over D-Bus
// and tells the CRI the pod's slice as cgroup_parent (upstream's expanded form); runc puts every
// container in a cri-containerd-<id>.scope under it, with the container's limits; pod memory reaches
// /stats/summary. First, bunlet with the other driver against that containerd stops at start with an
// error naming both. Runs where PID 1 is systemd on a cgroup2 mount — the v2 guest with --systemd
// (in-guest.test.ts); skips elsewhere (it uses the real kubepods.slice).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { isUnifiedMount } from "../../../src/pod/cgroups-unified.ts";
import type { Pod } from "../../../src/pod/types.ts";
import { staticPodFlags } from "../../support/agent.ts";
import { ensureBuilt, freePort, killAll, pollUntil, runBunlet, spawnBunlet, waitForHealthz, type BunletProcess } from "../../support/binary.ts";
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
const enabled = pid1 === "systemd" && isUnifiedMount(MOUNT) && process.getuid?.() === 0;
if (!enabled) console.warn("skipping cgroupDriver systemd pod tests: needs systemd as PID 1 on cgroup v2 (the guest with --systemd: in-guest.test.ts)");

const PID = process.pid;
const MiB = 2 ** 20;
const KUBEPODS = ["kubepods-burstable.slice", "kubepods-besteffort.slice", "kubepods.slice"];

describe.skipIf(!enabled)("cgroupDriver systemd: bunlet + containerd (runc SystemdCgroup) on cgroup v2", () => {
  let ctd: TestContainerd;
  const base = `/tmp/bunlet-v2-systemd-${PID}`;
  const manifests = join(base, "manifests");
  const node = `sd-${PID}`;
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
      // The slices are systemd's units: stopping them removes their cgroups (and kills what is left).
      for (const u of KUBEPODS) Bun.spawnSync(["systemctl", "stop", u]);
      rmSync(base, { recursive: true, force: true });
      await ctd?.release();
    }
  }, 120_000);

  const flags = (root: string, port: number) => [...staticPodFlags({ rootDir: join(base, root), manifests, cgroupRoot: "/", endpoint: ctd.endpoint, node, port }), "--file-check-frequency=1s"];

  test("the other driver against this containerd: bunlet stops at start naming both drivers", async () => {
    const r = await runBunlet([...flags("mismatch", freePort()), "--cgroup-driver=cgroupfs"], { timeoutMs: 90_000 });
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain('cgroup driver mismatch: bunlet uses cgroupDriver "cgroupfs" but the container runtime uses "systemd"');
    expect(r.stderr).toContain("SystemdCgroup=true");
    // Nothing was created with the wrong driver.
    expect(existsSync(join(MOUNT, "kubepods"))).toBe(false);
  }, 120_000);

  test("slices over D-Bus, containers in scopes under the pod's slice with their limits, memory in /stats/summary", async () => {
    writeFileSync(
      join(manifests, "b.yaml"),
      staticPodYaml("b", {
        image: ctd.images.busybox,
        command: ["sh", "-c", "exec sleep 3600"],
        terminationGracePeriodSeconds: 1,
        container: "      resources: { requests: { memory: 16Mi, cpu: 50m }, limits: { memory: 48Mi, cpu: 100m } }\n",
      }),
    );
    const port = freePort();
    p = spawnBunlet([...flags("root", port), "--cgroup-driver=systemd", "--system-reserved=memory=100Mi"]);
    await waitForHealthz(p, `http://127.0.0.1:${port}/healthz`, 60_000);
    const pod = async () => ((await (await fetch(`http://127.0.0.1:${port}/pods`)).json()) as { items: Pod[] }).items.find((x) => x.metadata.name === `b-${node}`);
    await pollUntil(async () => (await pod())?.status?.phase === "Running", "pod b Running", 120_000, 200);
    const uid = (await pod())!.metadata.uid;
    expect(p.stderr()).toContain("cgroup driver matches the container runtime's cgroupDriver=systemd");

    const show = (unit: string, prop: string) => Bun.spawnSync(["systemctl", "show", "--value", "-p", prop, unit], { stdout: "pipe" }).stdout.toString().trim();
    const cg = (...parts: string[]) => readFileSync(join(MOUNT, ...parts), "utf8").trim();
    const memTotal = Number(/^MemTotal:\s+(\d+) kB/m.exec(readFileSync("/proc/meminfo", "utf8"))![1]) * 1024;
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
    const scopes = readdirSync(join(MOUNT, ...podDir), { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);
    expect(scopes.length).toBeGreaterThanOrEqual(2);
    for (const s of scopes) expect(s).toMatch(/^cri-containerd-[0-9a-f]{64}\.scope$/);
    const limited = scopes.filter((s) => cg(...podDir, s, "memory.max") === String(48 * MiB));
    expect(limited.length).toBe(1);
    expect(show(limited[0]!, "Slice")).toBe(podUnit);
    // The container's processes really are there.
    expect(cg(...podDir, limited[0]!, "cgroup.procs").length).toBeGreaterThan(0);

    await pollUntil(
      async () => {
        const s = (await (await fetch(`http://127.0.0.1:${port}/stats/summary`)).json()) as { pods: { podRef: { name: string }; memory?: { workingSetBytes?: number } }[] };
        return (s.pods.find((x) => x.podRef.name === `b-${node}`)?.memory?.workingSetBytes ?? 0) > 0;
      },
      "pod b memory in /stats/summary",
      30_000,
      200,
    );

    // The pod removed: its slice stopped (and its cgroup gone).
    rmSync(join(manifests, "b.yaml"));
    await pollUntil(async () => show(podUnit, "ActiveState") === "inactive" && !existsSync(join(MOUNT, ...podDir)), "pod slice stopped", 120_000, 200);
  }, 400_000);
});
