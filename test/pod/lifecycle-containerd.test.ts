// machine test: root and a private containerd (test/support/containerd.ts)
// The whole pod lifecycle against a real containerd (private instance from test/support): static pod
// files → workers → kuberuntime → containerd, with pod cgroups, PLEG restarts, CrashLoopBackOff,
// eviction through killPod and removal. Skipped when not root.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createPodCgroupManager } from "../../src/pod/cm/container-manager.ts";
import { createKubeRuntime } from "../../src/pod/kuberuntime/manager.ts";
import { createPodLifecycle } from "../../src/pod/lifecycle.ts";
import type { PodLifecycle } from "../../src/pod/lifecycle-types.ts";
import type { Runtime } from "../../src/pod/runtime.ts";
import type { PodStatus } from "../../src/pod/types.ts";
import { acquireContainerd, canRunContainerd, removeNodePods, tearDownPods, type TestContainerd, testRuntimeCriName } from "../support/containerd.ts";
import { staticPodYaml } from "../support/manifests.ts";
import { until } from "../support/wait.ts";

const PID = process.pid;
const CGROUP_ROOT = `/bunlet-lc-${PID}`;
const BASE = `/tmp/bunlet-lc-${PID}`;
const MANIFESTS = join(BASE, "manifests");
const NODE = "lcnode";

const manifest = (name: string, command: string) =>
  staticPodYaml(name, {
    image: "bunlet.local/busybox:1",
    command: ["sh", "-c", command],
    terminationGracePeriodSeconds: 2,
    container: `      resources:
        requests: { cpu: 10m, memory: 16Mi }
        limits: { memory: 48Mi }
      readinessProbe:
        exec: { command: ["true"] }
        periodSeconds: 1
`,
  });

describe.skipIf(!canRunContainerd())("pod lifecycle on containerd", () => {
  let ctd: TestContainerd;
  let rt: Runtime;
  let lc: PodLifecycle;
  const newLifecycle = () =>
    createPodLifecycle({
      runtime: rt,
      cgroups: createPodCgroupManager({ cgroupRoot: CGROUP_ROOT, podPidsLimit: 256 }),
      config: { nodeName: NODE, hostIP: "127.0.0.1", staticPodPath: MANIFESTS, fileCheckFrequencyMs: 20_000, syncFrequencyMs: 60_000, errorRetryMs: 1_000 },
    });
  const status = (name: string): PodStatus | undefined => lc.listPodsForApi().find((p) => p.metadata.name === `${name}-${NODE}`)?.status;

  beforeAll(async () => {
    ctd = await acquireContainerd();
    mkdirSync(MANIFESTS, { recursive: true });
    rt = createKubeRuntime({ cri: ctd.cri, podLogsDir: join(BASE, "logs"), rootDir: join(BASE, "root") });
    lc = newLifecycle();
    await lc.start();
  }, 600_000);

  afterAll(async () => {
    await lc?.stop();
    await tearDownPods(ctd, () => removeNodePods(rt, NODE), CGROUP_ROOT, BASE);
  }, 120_000);

  test("a static pod runs in its pod cgroup and reports Running/Ready", async () => {
    writeFileSync(join(MANIFESTS, "web.yaml"), manifest("web", "exec sleep 3600"));
    const s = await until("web Ready", () => {
      const st = status("web");
      return st?.conditions?.find((c) => c.type === "Ready")?.status === "True" ? st : undefined;
    });
    expect(s.phase).toBe("Running");
    expect(s.qosClass).toBe("Burstable");
    expect(s.containerStatuses![0]!.containerID).toMatch(new RegExp(`^${testRuntimeCriName}://[0-9a-f]{64}$`));
    expect(s.containerStatuses![0]!.imageID).not.toBe("");
    const uid = lc.listPodsForApi().find((p) => p.metadata.name === `web-${NODE}`)!.metadata.uid;
    const podCg = join("/sys/fs/cgroup/memory", CGROUP_ROOT, "kubepods/burstable", `pod${uid}`);
    expect(readFileSync(join(podCg, "memory.limit_in_bytes"), "utf8").trim()).toBe(String(48 * 2 ** 20));
    // The container landed below the pod cgroup.
    expect(readdirSync(podCg).some((e) => statSync(join(podCg, e)).isDirectory())).toBe(true);
  }, 120_000);

  test("a restarted bunlet adopts the running pod instead of restarting it", async () => {
    const before = status("web")!.containerStatuses![0]!.containerID;
    await lc.stop();
    lc = newLifecycle();
    await lc.start();
    await until("web Running again", () => status("web")?.phase === "Running" || undefined);
    await Bun.sleep(2_500); // PLEG relists and a housekeeping pass (orphan detection) ran
    const c = status("web")!.containerStatuses![0]!;
    expect(c.containerID).toBe(before!);
    expect(c.restartCount).toBe(0);
  }, 120_000);

  test("a crashing container is restarted by PLEG, then backs off with CrashLoopBackOff", async () => {
    writeFileSync(join(MANIFESTS, "crash.yaml"), manifest("crash", "sleep 1; exit 3"));
    const s = await until("crash back-off", () => {
      const st = status("crash");
      return st?.containerStatuses?.[0]?.state.waiting?.reason === "CrashLoopBackOff" ? st : undefined;
    });
    const c = s.containerStatuses![0]!;
    expect(c.restartCount).toBeGreaterThanOrEqual(1);
    expect(c.lastState.terminated).toMatchObject({ exitCode: 3, reason: "Error" });
    expect(c.state.waiting!.message).toContain("back-off");
    expect(s.phase).toBe("Running");
    unlinkSync(join(MANIFESTS, "crash.yaml"));
  }, 120_000);

  test("a failing exec liveness probe (CRI ExecSync) restarts the container", async () => {
    const text = manifest("live", "touch /tmp/healthy; sleep 2; rm /tmp/healthy; exec sleep 3600").replace(
      "      readinessProbe:",
      '      livenessProbe:\n        exec: { command: ["test", "-f", "/tmp/healthy"] }\n        periodSeconds: 1\n        failureThreshold: 2\n      readinessProbe:',
    );
    writeFileSync(join(MANIFESTS, "live.yaml"), text);
    const s = await until("live restarted", () => {
      const st = status("live");
      return (st?.containerStatuses?.[0]?.restartCount ?? 0) >= 1 ? st : undefined;
    });
    expect(s.containerStatuses![0]!.lastState.terminated).toBeDefined();
    unlinkSync(join(MANIFESTS, "live.yaml"));
  }, 120_000);

  test("killPod evicts: Failed/Evicted, containers stopped, never restarted", async () => {
    const pod = lc.listPodsForApi().find((p) => p.metadata.name === `web-${NODE}`)!;
    await lc.killPod(pod, 1, { reason: "Evicted", message: "The node was low on resource: memory. " });
    expect(status("web")).toMatchObject({ phase: "Failed", reason: "Evicted" });
    const rs = await rt.getPodStatus(pod.metadata.uid, pod.metadata.name, pod.metadata.namespace);
    expect(rs.containers.every((c) => c.state !== "running")).toBe(true);
    const count = rs.containers.length;
    await Bun.sleep(3_000); // several PLEG relists and housekeeping passes
    const later = await rt.getPodStatus(pod.metadata.uid, pod.metadata.name, pod.metadata.namespace);
    expect(later.containers.length).toBe(count);
    expect(later.containers.every((c) => c.state !== "running")).toBe(true);
    expect(status("web")!.phase).toBe("Failed");
    expect(existsSync(join("/sys/fs/cgroup/memory", CGROUP_ROOT, "kubepods/burstable", `pod${pod.metadata.uid}`))).toBe(false);
  }, 120_000);

  test("removing manifests removes the pods from the runtime", async () => {
    unlinkSync(join(MANIFESTS, "web.yaml"));
    await until("runtime empty of test pods", async () => (await rt.getPods(true)).every((p) => !p.name.endsWith(`-${NODE}`)) || undefined, 60_000);
    expect(lc.listPodsForApi()).toEqual([]);
  }, 120_000);
});
