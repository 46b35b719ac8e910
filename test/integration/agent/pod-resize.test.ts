// In-place pod resize against a real control plane (test/support/upstream): `kubectl patch pod
// --subresource resize` changes a Guaranteed pod's cpu and memory; bunlet updates the container through
// the CRI and the pod cgroup (cgroup v1 files checked) with no restart, and reports allocatedResources,
// resources and the resize conditions. A resize the node has no room for now stays PodResizePending, a
// RestartContainer policy restarts the container, and a bunlet restart changes nothing. Prints the
// patch → applied time. Needs root, containerd, cgroup v1 and the upstream binaries.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseQuantity, quantityValue } from "../../../src/config/quantity.ts";
import { containerCgroupLeaves } from "../../../src/cri/container-cgroup.ts";
import { canRunContainerd } from "../../support/containerd.ts";
import { appPod, startUpstreamCluster, upstreamBinDir, type UpstreamCluster } from "../../support/upstream/index.ts";
import { until } from "../../support/wait.ts";

const bin = upstreamBinDir();
if (!bin.dir) console.warn(`skipping the pod resize tests: ${bin.why}`);
const cgroupV1 = existsSync("/sys/fs/cgroup/memory") && !existsSync("/sys/fs/cgroup/cgroup.controllers");
const MIB = 1024 * 1024;

describe.skipIf(!canRunContainerd() || !bin.dir || !cgroupV1)("in-place pod resize", () => {
  let c: UpstreamCluster;
  const kubectl = (...args: string[]) => c.cp.kubectl(...args);
  const apply = (doc: object) => c.cp.kubectlIn(JSON.stringify(doc), "apply", "-f", "-");
  const guaranteed = (cpu: string, memory: string) => ({ requests: { cpu, memory }, limits: { cpu, memory } });
  const resize = (name: string, cpu: string, memory: string) =>
    kubectl(
      "patch",
      "pod",
      name,
      "--subresource",
      "resize",
      "--type",
      "strategic",
      "-p",
      JSON.stringify({ spec: { containers: [{ name: "app", resources: guaranteed(cpu, memory) }] } }),
    );
  const podDir = (controller: string, uid: string) => join("/sys/fs/cgroup", controller, c.n.cgroupRoot, "kubepods", `pod${uid}`);
  const read = (path: string) => (existsSync(path) ? readFileSync(path, "utf8").trim() : undefined);
  const containerId = (p: any) => (p.status.containerStatuses[0].containerID as string).replace(/^[a-z-]+:\/\//, "");

  beforeAll(async () => {
    c = await startUpstreamCluster({ name: "resize", binDir: bin.dir!, config: ["syncFrequency: 5s", "nodeStatusUpdateFrequency: 2s"] });
  }, 240_000);
  afterAll(async () => {
    await c?.stop();
  }, 120_000);

  async function runPod(name: string, resizePolicy?: object[]): Promise<any> {
    await apply(appPod(name, c.n.ctd.images.busybox, { resources: guaranteed("200m", "64Mi"), ...(resizePolicy ? { resizePolicy } : {}) }));
    return c.podInPhase(name, "Running", 120_000);
  }

  test("cpu and memory resized in place: same container, new cgroup limits, status reports them", async () => {
    const p = await runPod("grow");
    const uid = p.metadata.uid as string;
    const id = containerId(p);
    const memLimit = (dir: string) => Number(read(join(dir, "memory.limit_in_bytes")));
    const quota = (dir: string) => Number(read(join(dir, "cpu.cfs_quota_us")));
    const pod = { mem: podDir("memory", uid), cpu: podDir("cpu", uid) };
    // The container's cgroup under the pod's, by the runtime's name for it (containerd: <id>, CRI-O: crio-<id>).
    const leaf = containerCgroupLeaves(id).find((l) => existsSync(join(pod.mem, l))) ?? id;
    const ctr = { mem: join(pod.mem, leaf), cpu: join(pod.cpu, leaf) };
    expect(memLimit(ctr.mem)).toBe(64 * MIB);
    expect(quota(ctr.cpu)).toBe(20_000);

    const start = performance.now();
    await resize("grow", "300m", "96Mi");
    await until("the container's new memory limit", () => memLimit(ctr.mem) === 96 * MIB, 30_000, { intervalMs: 20 });
    await until("the container's new cpu quota", () => quota(ctr.cpu) === 30_000, 30_000, { intervalMs: 20 });
    console.log(`resize patch → applied to the container cgroup: ${Math.round(performance.now() - start)} ms`);
    expect(memLimit(pod.mem)).toBe(96 * MIB);
    expect(quota(pod.cpu)).toBe(30_000);

    const after = await until(
      "the resized status",
      async () => {
        const o = await c.json("get", "pod", "grow");
        const s = o.status.containerStatuses[0];
        const done = s.resources?.limits?.memory === "96Mi" && !o.status.conditions?.some((x: any) => x.type === "PodResizeInProgress");
        return done ? o : undefined;
      },
      30_000,
      { intervalMs: 200 },
    );
    const s = after.status.containerStatuses[0];
    expect(s.restartCount).toBe(0);
    expect(containerId(after)).toBe(id);
    expect(s.allocatedResources).toEqual({ cpu: "300m", memory: "96Mi" });
    expect(s.resources).toEqual(guaranteed("300m", "96Mi"));
    expect(after.status.observedGeneration).toBe(after.metadata.generation);

    // A bunlet restart neither restarts nor re-resizes it: once the new process has synced the pod
    // (its first status logs the phase), the same container runs with the resized limits.
    await c.n.restart();
    await until(
      "the pod synced by the restarted bunlet",
      () => /pod phase pod=default\/grow .*to=Running/.test(c.n.proc.stderr() + c.n.proc.stdout()),
      90_000,
      {
        intervalMs: 200,
      },
    );
    const ids = (await c.n.ctd.cri.listContainers({ labelSelector: { "io.kubernetes.pod.uid": uid } }))
      .filter((x) => x.state === "CONTAINER_RUNNING")
      .map((x) => x.id);
    expect(ids).toEqual([id]);
    expect(memLimit(ctr.mem)).toBe(96 * MIB);
    expect(quota(pod.cpu)).toBe(30_000);
    expect(c.n.proc.stderr() + c.n.proc.stdout()).not.toContain("pod resize allocated pod=default/grow");
    await kubectl("delete", "pod", "grow", "--wait=true");
  }, 240_000);

  test("a resize the node has no room for now stays PodResizePending Deferred; reverted, the condition goes", async () => {
    // The API server refuses a resize beyond the node's allocatable; one beyond what the other pods leave is the node's to defer.
    const node = await c.json("get", "node", c.n.node);
    const allocatable = quantityValue(parseQuantity(node.status.allocatable.memory));
    const fillerMiB = Math.floor(allocatable / MIB) - 512;
    await apply(appPod("filler", c.n.ctd.images.busybox, { resources: { requests: { memory: `${fillerMiB}Mi` } } }));
    await c.podInPhase("filler", "Running", 120_000);
    const p = await runPod("huge");
    const id = containerId(p);
    await resize("huge", "200m", "1Gi");
    const pending = await until(
      "PodResizePending",
      async () => (await c.json("get", "pod", "huge")).status.conditions?.find((x: any) => x.type === "PodResizePending"),
      30_000,
      { intervalMs: 200 },
    );
    expect(pending.reason).toBe("Deferred");
    expect(pending.message).toMatch(/^Node didn't have enough resource: memory, requested: /);
    expect(pending.observedGeneration).toBe(2);
    await resize("huge", "200m", "64Mi");
    await until(
      "PodResizePending gone",
      async () => !(await c.json("get", "pod", "huge")).status.conditions?.some((x: any) => x.type === "PodResizePending"),
      30_000,
      { intervalMs: 200 },
    );
    const after = await c.json("get", "pod", "huge");
    expect(containerId(after)).toBe(id);
    expect(after.status.containerStatuses[0].restartCount).toBe(0);
    expect(after.status.containerStatuses[0].allocatedResources).toEqual({ cpu: "200m", memory: "64Mi" });
    await kubectl("delete", "pod", "huge", "filler", "--wait=true");
  }, 240_000);

  test("RestartContainer for memory: the container restarts once with the new limit", async () => {
    const p = await runPod("restart", [{ resourceName: "memory", restartPolicy: "RestartContainer" }]);
    const uid = p.metadata.uid as string;
    const id = containerId(p);
    await resize("restart", "200m", "128Mi");
    const after = await until(
      "the restarted container",
      async () => {
        const o = await c.json("get", "pod", "restart");
        const s = o.status.containerStatuses[0];
        return s.restartCount === 1 && s.state.running && containerId(o) !== id ? o : undefined;
      },
      60_000,
      { intervalMs: 200 },
    );
    expect(Number(read(join(podDir("memory", uid), containerId(after), "memory.limit_in_bytes")))).toBe(128 * MIB);
    expect(Number(read(join(podDir("memory", uid), "memory.limit_in_bytes")))).toBe(128 * MIB);
    await kubectl("delete", "pod", "restart", "--wait=true");
  }, 180_000);
});
