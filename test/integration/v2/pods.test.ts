// dist/bunlet running a static pod on containerd + runc on a real cgroup v2 kernel: kubepods limited
// to node allocatable, the pod in its QoS place with its limits, the container below it with the
// v2 `unified` settings, pod memory in /stats/summary. Runs where /sys/fs/cgroup is a cgroup2 mount
// (the v2 guest via in-guest.test.ts, or a v2 host); skips on a v1 host.
import { describe, expect, test } from "bun:test";
import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cgroupFile, guestGate, memTotalBytes, MiB, MOUNT, useGuestNode } from "../../support/guest-node.ts";
import { staticPodYaml } from "../../support/manifests.ts";

const onV2 = guestGate("cgroup2", "bunlet-on-cgroup-v2 pod tests");

describe.skipIf(!onV2)("bunlet pods on cgroup v2 (containerd, runc, real kernel)", () => {
  const n = useGuestNode({ name: "v2-pods", node: "v2" });

  test("kubepods = allocatable; the pod and its container carry their v2 limits; memory in /stats/summary", async () => {
    writeFileSync(
      join(n.manifests, "g.yaml"),
      staticPodYaml("g", {
        image: n.ctd.images.busybox,
        command: ["sh", "-c", "exec sleep 3600"],
        terminationGracePeriodSeconds: 1,
        container: "      resources: { limits: { memory: 48Mi, cpu: 100m } }\n",
      }),
    );
    await n.start([...n.flags(), "--file-check-frequency=1s", "--system-reserved=memory=100Mi"]);
    const uid = await n.waitRunning("g");

    const cg = (...parts: string[]) => cgroupFile(n.cgroupRoot, ...parts);
    expect(cg("kubepods", "memory.max")).toBe(String(memTotalBytes() - 100 * MiB));
    expect(cg("kubepods", "cgroup.subtree_control").split(" ")).toEqual(expect.arrayContaining(["cpu", "memory", "pids"]));

    const podDir = ["kubepods", `pod${uid}`]; // Guaranteed: directly under kubepods
    expect(cg(...podDir, "memory.max")).toBe(String(48 * MiB));
    expect(cg(...podDir, "cpu.max")).toBe("10000 100000");
    expect(cg(...podDir, "cpu.weight")).toBe("4"); // 102 shares
    const containerDirs = readdirSync(join(MOUNT, n.cgroupRoot, ...podDir), { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name);
    expect(containerDirs.length).toBeGreaterThanOrEqual(2); // the sandbox (pause) and "main"
    const limited = containerDirs.filter((d) => cg(...podDir, d, "memory.max") === String(48 * MiB));
    expect(limited.length).toBe(1);
    expect(cg(...podDir, limited[0]!, "memory.oom.group")).toBe("1");

    await n.waitPodMemory("g");
  }, 300_000);
});
