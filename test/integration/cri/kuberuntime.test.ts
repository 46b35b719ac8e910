// kuberuntime (src/pod/kuberuntime) driving real pods on a private containerd (or CRI-O): sync, cgroups and limits,
// exit codes, OOM kills, graceful kill, restart-safe adoption, spec-hash restarts, ephemeral containers, removal.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createCriClient } from "../../../src/cri/client.ts";
import { containerCgroupLeaves } from "../../../src/cri/container-cgroup.ts";
import { hashContainer } from "../../../src/pod/kuberuntime/hash.ts";
import { deleteUnusedContainers, deleteUnusedImages } from "../../../src/pod/kuberuntime/gc.ts";
import { createDirectSignaller, type DirectSignalEvent } from "../../../src/pod/kuberuntime/direct-signal.ts";
import { createKubeRuntime } from "../../../src/pod/kuberuntime/manager.ts";
import type { KubePod } from "../../../src/pod/kuberuntime/types.ts";
import type { BackOff, Runtime, RuntimeContainerStatus, RuntimePodStatus } from "../../../src/pod/runtime.ts";
import { type TestContainerd, acquireContainerd, canRunContainerd, removeNodePods, tearDownPods } from "../../support/containerd.ts";
import { until as waitUntil, type Polled } from "../../support/wait.ts";

const PID = process.pid;
const CGROUP_ROOT = `bunlet-kr-${PID}`;
const LOG_ROOT = `/tmp/bunlet-kr-logs-${PID}`;
const KUBELET_ROOT = `/tmp/bunlet-kr-root-${PID}`;
const noBackOff: BackOff = { isInBackOff: () => false, next: () => {} };

let seq = 0;
function makePod(spec: Partial<KubePod["spec"]> & { containers: KubePod["spec"]["containers"] }, name = `p${++seq}`): KubePod {
  return {
    metadata: { name, namespace: "kr-test", uid: `uid-${PID}-${name}`, labels: { app: name } },
    spec: { hostNetwork: true, restartPolicy: "Always", terminationGracePeriodSeconds: 2, ...spec },
  };
}

/** Polls until a value (30 s by default); a poll that throws is retried, its last error named on timeout. */
const until = <T>(what: string, fn: () => Polled<T> | Promise<Polled<T>>, timeoutMs = 30_000) => waitUntil(what, fn, timeoutMs, { retryErrors: true });

describe.skipIf(!canRunContainerd())("kuberuntime on containerd", () => {
  let ctd: TestContainerd;
  let rt: Runtime & { execSync: NonNullable<Runtime["execSync"]> };
  const cgroupParentOf = (pod: KubePod) => `/${CGROUP_ROOT}/pod${pod.metadata.uid}`;

  beforeAll(async () => {
    ctd = await acquireContainerd();
    rt = createKubeRuntime({ cri: ctd.cri, podLogsDir: LOG_ROOT, rootDir: KUBELET_ROOT });
  }, 600_000);

  afterAll(async () => {
    await tearDownPods(ctd, () => removeNodePods(rt), CGROUP_ROOT, LOG_ROOT, KUBELET_ROOT);
  }, 120_000);

  const status = (pod: KubePod) => rt.getPodStatus(pod.metadata.uid as string, pod.metadata.name, pod.metadata.namespace as string);
  const byName = (st: RuntimePodStatus, name: string) => st.containers.find((c) => c.name === name);

  async function syncUntil(pod: KubePod, what: string, ok: (st: RuntimePodStatus) => boolean, cgroupParent?: string) {
    return until(what, async () => {
      const st = await status(pod);
      if (ok(st)) return st;
      const r = await rt.syncPod(pod, st, noBackOff, { cgroupParent });
      if (r.errors.length) throw new Error(JSON.stringify(r.errors));
      return undefined;
    });
  }

  async function exited(pod: KubePod, name: string): Promise<RuntimeContainerStatus> {
    return until(`${name} to exit`, async () => {
      const c = byName(await status(pod), name);
      return c?.state === "exited" ? c : undefined;
    });
  }

  test("syncPod runs a 2-container pod in its cgroup parent with the memory and cpu limits", async () => {
    const pod = makePod({
      containers: [
        {
          name: "limited",
          image: ctd.images.busybox,
          command: ["sleep", "3600"],
          resources: { requests: { cpu: "100m", memory: "32Mi" }, limits: { cpu: "200m", memory: "64Mi" } },
        },
        { name: "free", image: ctd.images.busybox, command: ["sh", "-c", "echo started $(WHO); sleep 3600"], env: [{ name: "WHO", value: "free" }] },
      ],
    });
    const parent = cgroupParentOf(pod);
    const st = await syncUntil(pod, "both containers running", (s) => s.containers.filter((c) => c.state === "running").length === 2, parent);
    const limited = byName(st, "limited") as RuntimeContainerStatus;
    expect(limited.hash).toBe(hashContainer(pod.spec.containers[0] as object));
    expect(limited.attempt).toBe(0);
    expect(st.sandboxes[0]?.state).toBe("ready");

    // The container's cgroup under the pod's, by the runtime's name for it (containerd: <id>, CRI-O: crio-<id>).
    const leaf = containerCgroupLeaves(limited.id).find((l) => existsSync(`/sys/fs/cgroup/memory${parent}/${l}`));
    const mem = readFileSync(`/sys/fs/cgroup/memory${parent}/${leaf}/memory.limit_in_bytes`, "utf8").trim();
    expect(Number(mem)).toBe(64 * 1024 * 1024);
    const cpuDir = existsSync("/sys/fs/cgroup/cpu,cpuacct") ? "/sys/fs/cgroup/cpu,cpuacct" : "/sys/fs/cgroup/cpu";
    expect(readFileSync(`${cpuDir}${parent}/${leaf}/cpu.cfs_quota_us`, "utf8").trim()).toBe("20000");
    expect(readFileSync(`${cpuDir}${parent}/${leaf}/cpu.shares`, "utf8").trim()).toBe("102");

    // The log lands in /var/log/pods-style <dir>/<ns>_<name>_<uid>/<container>/<attempt>.log, $(WHO) expanded.
    const log = join(LOG_ROOT, `kr-test_${pod.metadata.name}_${pod.metadata.uid}`, "free", "0.log");
    await until("log line", async () => (existsSync(log) && readFileSync(log, "utf8").includes("started free") ? true : undefined));

    // A second sync of a converged pod changes nothing.
    const again = await rt.syncPod(pod, st, noBackOff, { cgroupParent: parent });
    expect(again.errors).toEqual([]);
    const after = await status(pod);
    expect(after.containers.map((c) => c.id).sort()).toEqual(st.containers.map((c) => c.id).sort());

    const ex = await rt.execSync(limited.id, ["cat", "/proc/self/cgroup"], 5000);
    expect(ex.exitCode).toBe(0);
    expect(ex.stdout).toContain(parent);
  }, 60_000);

  test("a pod-network pod gets its own hostname and a pod IP in its status", async () => {
    const pod = makePod({ hostNetwork: false, containers: [{ name: "app", image: ctd.images.busybox, command: ["sleep", "3600"] }] });
    const st = await syncUntil(pod, "running", (s) => byName(s, "app")?.state === "running");
    expect(st.sandboxes[0]?.ip).toMatch(/^10\.89\.\d+\.\d+$/);
    const ex = await rt.execSync((byName(st, "app") as RuntimeContainerStatus).id, ["hostname"], 5000);
    expect(ex.stdout.trim()).toBe(pod.metadata.name);
  }, 60_000);

  test("a container exiting 3 is Error with exit code 3, and a Never pod is not restarted", async () => {
    const pod = makePod({ restartPolicy: "Never", containers: [{ name: "fail", image: ctd.images.busybox, command: ["sh", "-c", "exit 3"] }] });
    await rt.syncPod(pod, await status(pod), noBackOff);
    const c = await exited(pod, "fail");
    expect(c.exitCode).toBe(3);
    expect(c.reason).toBe("Error");
    expect(c.finishedAtMs).toBeGreaterThan(0); // containerd may stamp the exit a hair before the start

    // Next sync: nothing to start, so the pod's sandbox is stopped; no new container appears.
    const r = await rt.syncPod(pod, await status(pod), noBackOff);
    expect(r.errors).toEqual([]);
    const st = await status(pod);
    expect(st.containers.length).toBe(1);
    expect(st.sandboxes[0]?.state).toBe("notready");
  }, 60_000);

  test("a container over its memory limit is OOMKilled", async () => {
    const pod = makePod({
      restartPolicy: "Never",
      containers: [{ name: "hog", image: ctd.images.memhog, args: ["256", "0"], resources: { limits: { memory: "32Mi" } } }],
    });
    await rt.syncPod(pod, await status(pod), noBackOff, { cgroupParent: cgroupParentOf(pod) });
    const c = await exited(pod, "hog");
    expect(c.reason).toBe("OOMKilled");
    expect(c.exitCode).toBe(137);
  }, 60_000);

  test("killPod stops containers within the grace period: SIGTERM honoured, SIGKILL after it", async () => {
    const pod = makePod({
      containers: [
        { name: "polite", image: ctd.images.busybox, command: ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 0.2; done"] },
        { name: "stubborn", image: ctd.images.busybox, command: ["sh", "-c", "trap '' TERM; while true; do sleep 0.2; done"] },
      ],
    });
    await syncUntil(pod, "running", (s) => s.containers.filter((c) => c.state === "running").length === 2);
    await rt.killPod({ uid: pod.metadata.uid as string, name: pod.metadata.name, namespace: "kr-test" }, 2);
    const st = await status(pod);
    expect(byName(st, "polite")?.state).toBe("exited");
    expect(byName(st, "polite")?.exitCode).toBe(0);
    expect(byName(st, "stubborn")?.state).toBe("exited");
    expect(byName(st, "stubborn")?.exitCode).toBe(137);
    expect(st.sandboxes.every((s) => s.state === "notready")).toBe(true);
  }, 60_000);

  test("a fresh runtime adopts running pods (restart safety) and a new image recreates the container", async () => {
    const pod = makePod({ containers: [{ name: "app", image: ctd.images.busybox, command: ["sleep", "3600"] }] });
    const st = await syncUntil(pod, "running", (s) => byName(s, "app")?.state === "running");
    const firstId = (byName(st, "app") as RuntimeContainerStatus).id;

    // A new client + runtime, as after a bunlet restart: it finds the pod by its labels...
    const cri2 = createCriClient({ endpoint: ctd.endpoint });
    try {
      const rt2 = createKubeRuntime({ cri: cri2, podLogsDir: LOG_ROOT, rootDir: KUBELET_ROOT });
      const found = (await rt2.getPods(false)).find((p) => p.uid === pod.metadata.uid);
      expect(found?.name).toBe(pod.metadata.name);
      expect(found?.namespace).toBe("kr-test");
      expect(found?.containers).toEqual([{ id: firstId, name: "app", state: "running" }]);
      // ...and syncing the same spec leaves it alone.
      const st2 = await rt2.getPodStatus(pod.metadata.uid as string, pod.metadata.name, "kr-test");
      expect((await rt2.syncPod(pod, st2, noBackOff)).errors).toEqual([]);
      expect(byName(await rt2.getPodStatus(pod.metadata.uid as string, pod.metadata.name, "kr-test"), "app")?.id).toBe(firstId);

      // Only a new image changes the container's hash (upstream HashContainer: name and image): a new
      // command alone leaves it running, a new image kills it and starts attempt 1.
      const command = makePod({ containers: [{ name: "app", image: ctd.images.busybox, command: ["sleep", "3601"] }] }, pod.metadata.name);
      expect((await rt2.syncPod(command, st2, noBackOff)).errors).toEqual([]);
      expect(byName(await rt2.getPodStatus(pod.metadata.uid as string, pod.metadata.name, "kr-test"), "app")?.id).toBe(firstId);
      const changed = makePod({ containers: [{ name: "app", image: ctd.images.pause }] }, pod.metadata.name);
      const st3 = await rt2.syncPod(changed, st2, noBackOff);
      expect(st3.errors).toEqual([]);
      const now = await status(pod);
      const running = now.containers.filter((c) => c.state === "running");
      expect(running.length).toBe(1);
      expect(running[0]?.attempt).toBe(1);
      expect(running[0]?.id).not.toBe(firstId);
      expect(now.containers.find((c) => c.id === firstId)?.state).toBe("exited");
    } finally {
      cri2.close();
    }
  }, 60_000);

  test("an ephemeral container added to a running pod starts once, in its target's process namespace, and is never restarted", async () => {
    const app = { name: "app", image: ctd.images.busybox, command: ["sleep", "3600"] };
    const pod = makePod({ containers: [app] });
    await syncUntil(pod, "running", (s) => byName(s, "app")?.state === "running");
    const debug = { name: "debugger", image: ctd.images.busybox, command: ["sh", "-c", "sleep 5; exit 1"], targetContainerName: "app" };
    const debugged = makePod({ containers: [app], ephemeralContainers: [debug] }, pod.metadata.name);
    const st = await syncUntil(debugged, "debugger started", (s) => byName(s, "debugger") !== undefined);
    // The app's processes are the debugger's to see (PID namespace TARGET).
    const ps = await rt.execSync((byName(st, "debugger") as RuntimeContainerStatus).id, ["ps", "-o", "args"], 5000);
    expect(ps.stdout).toContain("sleep 3600");
    const gone = await exited(debugged, "debugger");
    expect(gone.exitCode).toBe(1);
    expect((await rt.syncPod(debugged, await status(debugged), noBackOff)).errors).toEqual([]);
    const after = await status(debugged);
    expect(after.containers.filter((c) => c.name === "debugger").map((c) => c.id)).toEqual([gone.id]);
    expect(byName(after, "app")?.state).toBe("running");
  }, 60_000);

  test("restartPolicy Always restarts an exited container with the next attempt; back-off holds it", async () => {
    const pod = makePod({ containers: [{ name: "once", image: ctd.images.busybox, command: ["sh", "-c", "exit 1"] }] });
    await rt.syncPod(pod, await status(pod), noBackOff);
    await exited(pod, "once");
    const held = await rt.syncPod(pod, await status(pod), { isInBackOff: () => true, next: () => {}, delayMs: () => 10_000 });
    expect(held.errors).toEqual([
      { container: "once", reason: "CrashLoopBackOff", message: expect.stringContaining("back-off 10s restarting failed container=once") },
    ]);
    await rt.syncPod(pod, await status(pod), noBackOff);
    const st = await until("attempt 1", async () => {
      const s = await status(pod);
      return s.containers.some((c) => c.attempt === 1) ? s : undefined;
    });
    expect(st.containers.length).toBe(2);
  }, 60_000);

  test("emptyDir and hostPath volumes are mounted from their host paths", async () => {
    const hostDir = `${KUBELET_ROOT}/host-${PID}`;
    await Bun.write(`${hostDir}/hello.txt`, "from-host");
    const pod = makePod({
      restartPolicy: "Never",
      volumes: [
        { name: "scratch", emptyDir: {} },
        { name: "data", hostPath: { path: hostDir } },
      ],
      containers: [
        {
          name: "reader",
          image: ctd.images.busybox,
          command: ["sh", "-c", "cat /data/hello.txt > /scratch/copy.txt"],
          volumeMounts: [
            { name: "scratch", mountPath: "/scratch" },
            { name: "data", mountPath: "/data", readOnly: true },
          ],
        },
      ],
    });
    await rt.syncPod(pod, await status(pod), noBackOff);
    expect((await exited(pod, "reader")).exitCode).toBe(0);
    const copy = join(KUBELET_ROOT, "pods", pod.metadata.uid as string, "volumes", "kubernetes.io~empty-dir", "scratch", "copy.txt");
    expect(readFileSync(copy, "utf8")).toBe("from-host");
  }, 60_000);

  test("removePod removes every container and sandbox of the pod", async () => {
    const pod = makePod({ containers: [{ name: "app", image: ctd.images.busybox, command: ["sleep", "3600"] }] });
    await syncUntil(pod, "running", (s) => byName(s, "app")?.state === "running");
    await rt.killPod({ uid: pod.metadata.uid as string, name: pod.metadata.name, namespace: "kr-test" }, 0);
    await rt.removePod(pod.metadata.uid as string);
    const st = await status(pod);
    expect(st.containers).toEqual([]);
    expect(st.sandboxes).toEqual([]);
    expect((await rt.getPods(true)).some((p) => p.uid === pod.metadata.uid)).toBe(false);
  });

  test("container GC keeps the newest dead container of a live pod; image GC removes only unused images", async () => {
    const pod = makePod({ containers: [{ name: "flap", image: ctd.images.busybox, command: ["sh", "-c", "exit 1"] }] });
    await rt.syncPod(pod, await status(pod), noBackOff);
    await exited(pod, "flap");
    await rt.syncPod(pod, await status(pod), noBackOff);
    const two = await until("second attempt exited", async () => {
      const st = await status(pod);
      return st.containers.length === 2 && st.containers.every((c) => c.state === "exited") ? st : undefined;
    });
    const newest = two.containers.reduce((a, b) => (a.attempt > b.attempt ? a : b));

    await deleteUnusedContainers(ctd.cri);
    const left = (await status(pod)).containers;
    expect(left.map((c) => c.id)).toEqual([newest.id]);

    // Remove the pods that used memhog (the OOM test): then no container uses it, while busybox is
    // used by running pods and pause is kept explicitly.
    for (const c of await ctd.cri.listContainers()) {
      if (c.image?.image !== ctd.images.memhog) continue;
      const uid = c.labels["io.kubernetes.pod.uid"] as string;
      await rt.killPod({ uid, name: c.labels["io.kubernetes.pod.name"] ?? "", namespace: "kr-test" }, 0);
      await rt.removePod(uid);
    }
    const r = await deleteUnusedImages(ctd.cri, [ctd.images.pause]);
    const tags = (await ctd.cri.listImages()).flatMap((i) => i.repoTags);
    expect(tags).toContain(ctd.images.busybox);
    expect(tags).toContain(ctd.images.pause);
    expect(tags).not.toContain(ctd.images.memhog);
    expect(r.removed).toContain(ctd.images.memhog);
    expect(r.freedBytes).toBeGreaterThan(0);
    // Put memhog back for any later test in this process (containerd.sh and crio.sh start re-import missing images).
    const { spawnSync } = await import("node:child_process");
    const { testContainerdEnv, testRuntimeScript } = await import("../../support/containerd.ts");
    expect(spawnSync("bash", [testRuntimeScript, "start"], { env: testContainerdEnv }).status).toBe(0);
    expect(await ctd.cri.imageStatus(ctd.images.memhog)).not.toBeNull();
  }, 60_000);
  test("a 1 s stop signals the container's init directly (pidfd, checked against containerd's pid and the container cgroup) before StopContainer", async () => {
    const events: DirectSignalEvent[] = [];
    const directSignal = createDirectSignaller({ cri: ctd.cri, onSignal: (e) => events.push(e) });
    try {
      const rtd = createKubeRuntime({ cri: ctd.cri, podLogsDir: LOG_ROOT, rootDir: KUBELET_ROOT, directSignal });
      const pod = makePod({ containers: [{ name: "hog", image: ctd.images.memhog, args: ["8"] }] });
      const podStatus = () => rtd.getPodStatus(pod.metadata.uid as string, pod.metadata.name, pod.metadata.namespace as string);
      await until("hog running", async () => {
        const st = await podStatus();
        if (byName(st, "hog")?.state === "running") return st;
        await rtd.syncPod(pod, st, noBackOff, { cgroupParent: cgroupParentOf(pod) });
        return undefined;
      });
      await until("the signaller to learn the container", async () => (await podStatus(), directSignal.size === 1));
      const hog = byName(await podStatus(), "hog") as RuntimeContainerStatus;
      const verbose = await ctd.cri.containerStatus(hog.id, true);
      const pid = (JSON.parse(verbose.info.info as string) as { pid: number }).pid;
      expect(readFileSync(`/proc/${pid}/cgroup`, "utf8")).toContain(hog.id);
      await rtd.killPod({ uid: pod.metadata.uid as string, name: pod.metadata.name, namespace: pod.metadata.namespace as string }, 1);
      expect(events.map(({ containerId, pid, signal }) => ({ containerId, pid, signal }))).toEqual([{ containerId: hog.id, pid, signal: 15 }]);
      // memhog exits 0 on SIGTERM: it was not left to the SIGKILL a second later.
      const done = await until("hog to exit", async () => {
        const c = byName(await podStatus(), "hog");
        return c?.state === "exited" ? c : undefined;
      });
      expect(done.exitCode).toBe(0);
      await rtd.removePod(pod.metadata.uid as string);
    } finally {
      directSignal.close();
    }
  }, 60_000);
});
