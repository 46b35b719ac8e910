// The pod cgroup manager over a fake cgroup v1 mount (a temp dir with a directory per controller): which
// directories and files each controller gets. The real kernel's answer is checked as root in
// test/integration/pod/cgroups-v1.test.ts and kubepods-limit.test.ts.
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createPodCgroupManager } from "../../../src/pod/cm/container-manager.ts";
import { makePod } from "../fake-runtime.ts";
import { res, useFakeMounts } from "./fake-cgroups.ts";

const CONTROLLERS = ["memory", "cpu", "pids", "cpuset"];
const mounts = useFakeMounts();
const { read } = mounts;

describe("cgroup v1 QoS and pod cgroups (fake mount)", () => {
  test("QoS and pod cgroups in every controller, the limits in their controller's files, the QoS shares following the pods", async () => {
    const root = mounts.v1(CONTROLLERS);
    writeFileSync(join(root, "cpuset", "cpuset.cpus"), "0-1");
    writeFileSync(join(root, "cpuset", "cpuset.mems"), "0");
    const m = createPodCgroupManager({
      mountRoot: root,
      cgroupRoot: "/node",
      controllers: CONTROLLERS,
      podPidsLimit: 256,
      kubepods: { memoryLimitBytes: 2 ** 30, cpuShares: 2048, pidsLimit: 1000 },
    });
    const g = makePod({ name: "g", uid: "g1", containers: [res({ cpu: "500m", memory: "64Mi" }, { cpu: "500m", memory: "64Mi" })] });
    const b = makePod({ name: "b", uid: "b1", containers: [res({ cpu: "250m" }, { cpu: "1" })] });
    expect(await m.ensurePod(g)).toBe("/node/kubepods/podg1");
    expect(await m.ensurePod(b)).toBe("/node/kubepods/burstable/podb1");
    expect(read("memory", "node", "kubepods", "memory.limit_in_bytes")).toBe(String(2 ** 30));
    expect(read("cpu", "node", "kubepods", "cpu.shares")).toBe("2048");
    expect(read("pids", "node", "kubepods", "pids.max")).toBe("1000");
    expect(m.kubepodsMemoryLimit()).toEqual({ wantedBytes: 2 ** 30, heldBytes: 2 ** 30, applied: true });
    expect(existsSync(join(root, "cpuset", "node", "kubepods", "burstable", "podb1"))).toBe(true);
    expect(read("memory", "node", "kubepods", "podg1", "memory.limit_in_bytes")).toBe(String(64 * 2 ** 20));
    expect(read("cpu", "node", "kubepods", "podg1", "cpu.cfs_quota_us")).toBe("50000");
    expect(read("pids", "node", "kubepods", "burstable", "podb1", "pids.max")).toBe("256");
    expect(read("cpu", "node", "kubepods", "burstable", "cpu.shares")).toBe("256");
    expect(read("cpu", "node", "kubepods", "besteffort", "cpu.shares")).toBe("2");
    expect((await m.listPodUids()).sort()).toEqual(["b1", "g1"]);

    // Pod cgroups are listed from the memory controller, an orphan's too (a fake cgroup is not removed:
    // its files are not the kernel's; the integration test removes real ones).
    mkdirSync(join(root, "memory", "node", "kubepods", "besteffort", "podorphan"));
    expect((await m.listPodUids()).sort()).toEqual(["b1", "g1", "orphan"]);
    await m.removePod("b1");
    expect(read("cpu", "node", "kubepods", "burstable", "cpu.shares")).toBe("2");
    m.close();
  });
});
