// emptyDir `medium: Memory` on a private containerd: a tmpfs sized as upstream (sizeLimit, pod memory
// limit) is mounted at <rootDir>/pods/<uid>/volumes/kubernetes.io~empty-dir/<name>, seen by the
// container, kept across a container restart, and unmounted (directory removed) when the pod is
// removed — directly, after its static manifest is deleted, and as an orphan found by housekeeping.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createPodCgroupManager } from "../../../src/pod/cm/container-manager.ts";
import { emptyDirPath, mountPointsUnder } from "../../../src/pod/kuberuntime/empty-dir.ts";
import { createKubeRuntime } from "../../../src/pod/kuberuntime/manager.ts";
import type { KubePod } from "../../../src/pod/kuberuntime/types.ts";
import { createPodLifecycle } from "../../../src/pod/lifecycle.ts";
import type { PodLifecycle } from "../../../src/pod/lifecycle-types.ts";
import type { BackOff, Runtime, RuntimePodStatus } from "../../../src/pod/runtime.ts";
import { type TestContainerd, acquireContainerd, canRunContainerd } from "../../support/containerd.ts";
import { removeCgroupTree } from "../../support/cgroup.ts";
import { until as waitUntil, type Polled } from "../../support/wait.ts";

const PID = process.pid;
const CGROUP_ROOT = `/bunlet-ed-${PID}`;
const BASE = `/tmp/bunlet-ed-${PID}`;
const ROOT = join(BASE, "root");
const MANIFESTS = join(BASE, "manifests");
const NODE = "ednode";
const Mi = 2 ** 20;
const noBackOff: BackOff = { isInBackOff: () => false, next: () => {} };

/** The tmpfs mounted at `path` as /proc/mounts shows it, or undefined. */
function tmpfsAt(path: string): { sizeBytes: number } | undefined {
  for (const line of readFileSync("/proc/mounts", "utf8").split("\n")) {
    const [src, mp, type, options] = line.split(" ");
    if (mp !== path || type !== "tmpfs" || src !== "tmpfs") continue;
    const size = /(?:^|,)size=(\d+)k(?:,|$)/.exec(options ?? "");
    return { sizeBytes: size ? Number(size[1]) * 1024 : 0 };
  }
  return undefined;
}

function makePod(name: string, volumes: KubePod["spec"]["volumes"], memoryLimit = "64Mi"): KubePod {
  return {
    metadata: { name, namespace: "ed-test", uid: `uid-${PID}-${name}` },
    spec: {
      hostNetwork: true,
      restartPolicy: "Always",
      terminationGracePeriodSeconds: 2,
      volumes,
      containers: [
        {
          name: "main",
          image: "bunlet.local/busybox:1",
          command: ["sh", "-c", "echo hi > /cache/hi; exec sleep 3600"],
          resources: { limits: { memory: memoryLimit } },
          volumeMounts: [{ name: "cache", mountPath: "/cache" }],
        },
      ],
    },
  };
}

/** Polls until a value; a poll that throws is retried, its last error named on timeout. */
const until = <T>(what: string, fn: () => Polled<T> | Promise<Polled<T>>, timeoutMs = 60_000) => waitUntil(what, fn, timeoutMs, { retryErrors: true });

describe.skipIf(!canRunContainerd())("emptyDir medium Memory on containerd", () => {
  let ctd: TestContainerd;
  let rt: Runtime & { execSync: NonNullable<Runtime["execSync"]> };
  let lc: PodLifecycle | undefined;

  beforeAll(async () => {
    ctd = await acquireContainerd();
    mkdirSync(MANIFESTS, { recursive: true });
    rt = createKubeRuntime({ cri: ctd.cri, podLogsDir: join(BASE, "logs"), rootDir: ROOT, cgroupParent: (p) => `${CGROUP_ROOT}/pod${p.metadata.uid}` });
  }, 600_000);

  afterAll(async () => {
    await lc?.stop();
    try {
      for (const p of await rt.getPods(true).catch(() => [])) {
        if (p.namespace !== "ed-test" && !p.name.endsWith(`-${NODE}`)) continue;
        await rt.killPod(p, 0).catch(() => {});
        await rt.removePod(p.uid).catch(() => {});
      }
    } finally {
      // Whatever a failed test left mounted goes before the directory does.
      for (const mp of mountPointsUnder(BASE)) spawnSync("umount", ["-l", mp]);
      removeCgroupTree(CGROUP_ROOT);
      rmSync(BASE, { recursive: true, force: true });
      await ctd?.release();
    }
  }, 120_000);

  const status = (pod: KubePod) => rt.getPodStatus(pod.metadata.uid as string, pod.metadata.name, pod.metadata.namespace as string);
  async function syncUntilRunning(pod: KubePod): Promise<RuntimePodStatus> {
    return until(`${pod.metadata.name} running`, async () => {
      const st = await status(pod);
      if (st.containers.some((c) => c.state === "running")) return st;
      const r = await rt.syncPod(pod, st, noBackOff);
      if (r.errors.length) throw new Error(JSON.stringify(r.errors));
      return undefined;
    });
  }

  test("a tmpfs of sizeLimit is mounted, seen by the container, kept across a restart and unmounted by removePod", async () => {
    const pod = makePod("sized", [{ name: "cache", emptyDir: { medium: "Memory", sizeLimit: "8Mi" } }]);
    const uid = pod.metadata.uid as string;
    const dir = emptyDirPath(ROOT, uid, "cache");
    const st = await syncUntilRunning(pod);
    expect(tmpfsAt(dir)).toEqual({ sizeBytes: 8 * Mi });
    const id = st.containers.find((c) => c.state === "running")!.id;
    const inside = await rt.execSync(id, ["sh", "-c", "grep ' /cache ' /proc/mounts; cat /cache/hi"], 10_000);
    expect(inside.stdout).toMatch(/^tmpfs \/cache tmpfs .*size=8192k/m);
    expect(inside.stdout).toContain("hi");
    expect(readFileSync(join(dir, "hi"), "utf8")).toBe("hi\n");

    // A restarted container gets the same volume (one mount, contents kept).
    await ctd.cri.stopContainer(id, 0);
    await until("container restarted", async () => {
      const s = await status(pod);
      if (s.containers.some((c) => c.state === "running")) return s;
      await rt.syncPod(pod, s, noBackOff);
      return undefined;
    });
    expect(mountPointsUnder(dir)).toEqual([dir]);

    await rt.killPod({ uid, name: pod.metadata.name, namespace: "ed-test" }, 0);
    await rt.removePod(uid);
    expect(tmpfsAt(dir)).toBeUndefined();
    expect(mountPointsUnder(join(ROOT, "pods", uid))).toEqual([]);
    expect(existsSync(join(ROOT, "pods", uid))).toBe(false);
  }, 90_000);

  test("tearDownVolumes of a killed pod unmounts its volumes and deletes their data, keeping the pod dir", async () => {
    // An evicted pod stays known (its Failed status is kept) but its volumes go, so disk or memory
    // held by an emptyDir is given back — the recovery an eviction is for.
    const pod = makePod("evicted", [{ name: "cache", emptyDir: { medium: "Memory", sizeLimit: "4Mi" } }]);
    const uid = pod.metadata.uid as string;
    await syncUntilRunning(pod);
    const cache = emptyDirPath(ROOT, uid, "cache");
    expect(tmpfsAt(cache)).toEqual({ sizeBytes: 4 * Mi });
    expect(readFileSync(join(cache, "hi"), "utf8")).toBe("hi\n");
    await rt.killPod({ uid, name: pod.metadata.name, namespace: "ed-test" }, 0);
    await rt.tearDownVolumes!(uid);
    expect(mountPointsUnder(join(ROOT, "pods", uid))).toEqual([]);
    expect(existsSync(join(ROOT, "pods", uid, "volumes"))).toBe(false);
    expect(existsSync(join(ROOT, "pods", uid))).toBe(true);
    await rt.removePod(uid);
    expect(existsSync(join(ROOT, "pods", uid))).toBe(false);
  }, 90_000);

  test("without sizeLimit the pod memory limit sizes the tmpfs", async () => {
    const pod = makePod("podlimit", [{ name: "cache", emptyDir: { medium: "Memory" } }], "24Mi");
    const uid = pod.metadata.uid as string;
    await syncUntilRunning(pod);
    expect(tmpfsAt(emptyDirPath(ROOT, uid, "cache"))).toEqual({ sizeBytes: 24 * Mi });
    await rt.killPod({ uid, name: pod.metadata.name, namespace: "ed-test" }, 0);
    await rt.removePod(uid);
    expect(existsSync(join(ROOT, "pods", uid))).toBe(false);
  }, 90_000);

  test("the pod lifecycle unmounts when a static pod's manifest is deleted and when housekeeping removes an orphan", async () => {
    // An orphan: a runtime pod no source wants (as left by an earlier bunlet).
    const orphan = makePod("orphan", [{ name: "cache", emptyDir: { medium: "Memory", sizeLimit: "4Mi" } }]);
    const orphanDir = emptyDirPath(ROOT, orphan.metadata.uid as string, "cache");
    await syncUntilRunning(orphan);
    expect(tmpfsAt(orphanDir)).toEqual({ sizeBytes: 4 * Mi });

    writeFileSync(
      join(MANIFESTS, "mem.yaml"),
      `apiVersion: v1
kind: Pod
metadata:
  name: mem
spec:
  hostNetwork: true
  terminationGracePeriodSeconds: 2
  volumes:
    - name: cache
      emptyDir: { medium: Memory, sizeLimit: 6Mi }
  containers:
    - name: main
      image: bunlet.local/busybox:1
      command: ["sleep", "3600"]
      volumeMounts: [{ name: cache, mountPath: /cache }]
`,
    );
    lc = createPodLifecycle({
      runtime: rt,
      cgroups: createPodCgroupManager({ cgroupRoot: CGROUP_ROOT, podPidsLimit: 256 }),
      config: {
        nodeName: NODE,
        hostIP: "127.0.0.1",
        staticPodPath: MANIFESTS,
        fileCheckFrequencyMs: 500,
        housekeepingPeriodMs: 500,
        syncFrequencyMs: 60_000,
        errorRetryMs: 1_000,
      },
    });
    await lc.start();
    await until("orphan unmounted and removed", () => !tmpfsAt(orphanDir) && !existsSync(join(ROOT, "pods", orphan.metadata.uid as string)));

    const uid = await until("mem Running", () => {
      const p = lc!.listPodsForApi().find((x) => x.metadata.name === `mem-${NODE}`);
      return p?.status?.phase === "Running" ? p.metadata.uid : undefined;
    });
    const dir = emptyDirPath(ROOT, uid, "cache");
    expect(tmpfsAt(dir)).toEqual({ sizeBytes: 6 * Mi });
    unlinkSync(join(MANIFESTS, "mem.yaml"));
    await until("mem unmounted and removed", () => !tmpfsAt(dir) && !existsSync(join(ROOT, "pods", uid)));
  }, 120_000);
});
