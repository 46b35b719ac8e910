// The summary provider with a real containerd: containers mapped to their pod through the CRI
// listing, per-container memory from the container cgroups runc made under the pod cgroup, the
// writable layer (rootfs) from CRI ContainerStats, logs from the pod log directory.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createKubeRuntime } from "../../../src/pod/kuberuntime/manager.ts";
import type { KubePod } from "../../../src/pod/kuberuntime/types.ts";
import type { BackOff } from "../../../src/pod/runtime.ts";
import { createSummaryProvider } from "../../../src/stats/summary-provider.ts";
import type { NodeStats, PodStats } from "../../../src/stats/summary.ts";
import { type TestContainerd, acquireContainerd, canRunContainerd, tearDownPods } from "../../support/containerd.ts";

const PID = process.pid;
const CGROUP_ROOT = `bunlet-st-${PID}`;
const LOG_ROOT = `/tmp/bunlet-st-logs-${PID}`;
const KUBELET_ROOT = `/tmp/bunlet-st-root-${PID}`;
const MI = 1024 * 1024;
const noBackOff: BackOff = { isInBackOff: () => false, next: () => {} };

describe.skipIf(!canRunContainerd())("pod stats with containerd", () => {
  let ctd: TestContainerd;
  let rt: ReturnType<typeof createKubeRuntime>;
  const pod: KubePod = {
    metadata: { name: "stats", namespace: "st-test", uid: `uid-${PID}-stats` },
    spec: { hostNetwork: true, restartPolicy: "Always", terminationGracePeriodSeconds: 1, containers: [] },
  };
  const podRel = `${CGROUP_ROOT}/pod${pod.metadata.uid}`;

  beforeAll(async () => {
    ctd = await acquireContainerd();
    rt = createKubeRuntime({ cri: ctd.cri, podLogsDir: LOG_ROOT, rootDir: KUBELET_ROOT });
    pod.spec.containers = [
      { name: "hog", image: ctd.images.memhog, args: ["40", "0"] },
      { name: "writer", image: ctd.images.busybox, command: ["sh", "-c", "dd if=/dev/zero of=/fill bs=1M count=8 && echo wrote && sleep 3600"] },
    ];
  }, 600_000);

  afterAll(async () => {
    await tearDownPods(
      ctd,
      async () => {
        await rt?.killPod({ uid: pod.metadata.uid as string, name: pod.metadata.name, namespace: pod.metadata.namespace as string }, 0).catch(() => {});
        await rt?.removePod(pod.metadata.uid as string).catch(() => {});
      },
      CGROUP_ROOT,
      LOG_ROOT,
      KUBELET_ROOT,
    );
  }, 120_000);

  test("containers, their memory, rootfs and logs, and the pod's ephemeral-storage", async () => {
    const nodefs = { time: new Date().toISOString(), capacityBytes: 1e12, availableBytes: 5e11, inodes: 1e6, inodesFree: 5e5 };
    const provider = createSummaryProvider({
      nodeName: "st-node",
      nodeStats: (): NodeStats => ({ nodeName: "x", fs: nodefs }),
      activePods: () => [pod],
      podCgroupPath: () => podRel,
      cri: ctd.cri,
      criTtlMs: 0,
      podLogsDir: LOG_ROOT,
      rootDir: KUBELET_ROOT,
    });

    // Drive the runtime and the provider until everything is measured (containerd refreshes its
    // snapshot usage every 10 s, so the writable layer can lag).
    const deadline = Date.now() + 60_000;
    let ps: PodStats | undefined;
    const done = (p: PodStats | undefined) => {
      const c = (n: string) => p?.containers?.find((x) => x.name === n);
      return (c("hog")?.memory?.workingSetBytes ?? 0) >= 40 * MI && (c("writer")?.rootfs?.usedBytes ?? 0) >= 8 * MI && (c("writer")?.logs?.usedBytes ?? 0) > 0;
    };
    while (!done(ps)) {
      if (Date.now() > deadline) throw new Error(`pod stats never complete: ${JSON.stringify(ps)}`);
      const st = await rt.getPodStatus(pod.metadata.uid as string, pod.metadata.name, pod.metadata.namespace as string);
      if (st.containers.filter((c) => c.state === "running").length < 2) {
        const r = await rt.syncPod(pod, st, noBackOff, { cgroupParent: `/${podRel}` });
        if (r.errors.length) throw new Error(JSON.stringify(r.errors));
      }
      ps = (await provider.summary()).pods[0];
      await Bun.sleep(200);
    }
    const p = ps!;
    expect(p.podRef).toEqual({ name: "stats", namespace: "st-test", uid: pod.metadata.uid as string });
    expect(p.startTime).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(p.containers!.map((c) => c.name).sort()).toEqual(["hog", "writer"]);
    const hog = p.containers!.find((c) => c.name === "hog")!;
    const writer = p.containers!.find((c) => c.name === "writer")!;
    expect(hog.startTime).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(hog.cpu?.usageCoreNanoSeconds).toBeGreaterThan(0);
    // The pod cgroup holds both containers and the sandbox's pause process.
    expect(p.memory!.workingSetBytes!).toBeGreaterThanOrEqual(hog.memory!.workingSetBytes!);
    expect(p.process_stats?.process_count).toBeGreaterThanOrEqual(3);
    expect(writer.rootfs).toMatchObject({ capacityBytes: 1e12, availableBytes: 5e11 });
    const eph = p["ephemeral-storage"]!;
    const sum = p.containers!.reduce((a, c) => a + (c.rootfs?.usedBytes ?? 0) + (c.logs?.usedBytes ?? 0), 0);
    expect(eph.usedBytes).toBeGreaterThanOrEqual(sum);
    expect(eph.usedBytes).toBeGreaterThanOrEqual(8 * MI);
  }, 120_000);
});
