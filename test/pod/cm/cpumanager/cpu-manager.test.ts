import { describe, expect, test } from "bun:test";
import { createCPUManager, type CPUManagerOptions, type CPUManagerRuntime, type RunningContainer } from "../../../../src/pod/cm/cpumanager/cpu-manager.ts";
import { cpuSet } from "../../../../src/config/cpuset.ts";
import { createManualClock } from "../../../../src/manual-clock.ts";
import type { PodLike } from "../../../../src/pod/pod-like.ts";
import { pollUntil } from "../../../support/wait.ts";
import { machine } from "./machines.ts";

const guaranteed = (uid: string, cpu: string): PodLike => ({
  metadata: { name: uid, namespace: "default", uid },
  spec: { containers: [{ name: "app", resources: { requests: { cpu, memory: "10Mi" }, limits: { cpu, memory: "10Mi" } } }] },
});
const bestEffort = (uid: string): PodLike => ({ metadata: { name: uid, namespace: "default", uid }, spec: { containers: [{ name: "app" }] } });

function setup(over: Partial<CPUManagerOptions> = {}) {
  const files = new Map<string, string>();
  const clock = createManualClock();
  const opts: CPUManagerOptions = {
    policyName: "static",
    reconcilePeriodMs: 10_000,
    topology: machine(1, 2, 1), // two CPUs, as a small VM
    reservedMilliCPU: 1000,
    reservedSystemCPUs: cpuSet(0),
    stateDir: "/root",
    readFile: async (p) => files.get(p),
    writeFile: async (p, t) => void files.set(p, t),
    clock,
    ...over,
  };
  return { files, clock, opts };
}

function runtime(pods: PodLike[], running: RunningContainer[]) {
  const updates: [string, string][] = [];
  const rt: CPUManagerRuntime = {
    activePods: () => pods,
    sourcesReady: () => true,
    runningContainers: async () => running,
    updateContainerCPUSet: async (id, cpus) => void updates.push([id, cpus]),
  };
  return { rt, updates };
}

describe("NewManager's refusals", () => {
  test.each([
    [{ policyName: "dynamic" }, 'unknown policy: "dynamic"'],
    [{ reservedMilliCPU: 0, reservedSystemCPUs: [] }, "[cpumanager] the static policy requires systemreserved.cpu + kubereserved.cpu to be greater than zero"],
    [{ policyOptions: { "full-pcpus-only": "true" } }, 'cpumanager option "full-pcpus-only"'],
  ] as [Partial<CPUManagerOptions>, string][])("%j", (over, msg) => expect(() => createCPUManager(setup(over).opts)).toThrow(msg));
});

describe("static on two CPUs with CPU 0 reserved", () => {
  test("a Guaranteed cpu: 1 pod gets CPU 1, others the shared pool; a second is refused as upstream", async () => {
    const { files, opts } = setup();
    const m = createCPUManager(opts);
    const pods: PodLike[] = [];
    await m.start(runtime(pods, []).rt);
    expect(m.allocatableCPUs()).toEqual([1]);
    const g = guaranteed("g1", "1");
    expect(m.admit(g, pods)).toBeUndefined();
    pods.push(g);
    expect(m.cpuAffinity("g1", "app")).toBe("1");
    expect(m.exclusiveCPUs("g1", "app")).toEqual([1]);
    expect(m.cpuAffinity("be", "app")).toBe("0");
    expect(m.admit(guaranteed("g2", "1"), pods)).toEqual({
      reason: "UnexpectedAdmissionError",
      message: "Allocate failed due to not enough cpus available to satisfy request: requested=1, available=0, which is unexpected",
    });
    await m.flush();
    const file = JSON.parse(files.get("/root/cpu_manager_state")!);
    expect([file.policyName, file.defaultCpuSet, file.entries]).toEqual(["static", "0", { g1: { app: "1" } }]);
    m.stop();

    // A restart reads the assignment back.
    const again = createCPUManager(opts);
    await again.start(runtime(pods, []).rt);
    expect(again.cpuAffinity("g1", "app")).toBe("1");
    again.stop();
  });

  test("the CPUs of a pod gone go back to the pool; the reconcile loop gives running containers the new pool", async () => {
    const { clock, opts } = setup();
    const m = createCPUManager(opts);
    const pods: PodLike[] = [guaranteed("g1", "1"), bestEffort("be")];
    const { rt, updates } = runtime(pods, [
      { id: "c-g1", podUid: "g1", containerName: "app" },
      { id: "c-be", podUid: "be", containerName: "app" },
    ]);
    await m.start(rt);
    m.admit(pods[0]!, []);
    expect(m.cpuAffinity("g1", "app")).toBe("1"); // given at create: not updated again
    await m.reconcile();
    expect(updates).toEqual([["c-be", "0"]]);
    pods.splice(0, 1); // g1 deleted
    clock.advance(10_000); // the loop's pass
    await pollUntil(() => updates.length === 2, "the loop's update");
    expect(m.cpuAffinity("be", "app")).toBe("0-1");
    expect(updates).toEqual([
      ["c-be", "0"],
      ["c-be", "0-1"],
    ]);
    m.stop();
  });

  test("a state file of another policy: upstream's refusal to start", async () => {
    const { files, opts } = setup();
    const none = createCPUManager({ ...opts, policyName: "none" });
    await none.start(runtime([], []).rt);
    expect(JSON.parse(files.get("/root/cpu_manager_state")!).policyName).toBe("none");
    await expect(createCPUManager(opts).start(runtime([], []).rt)).rejects.toThrow(
      'could not restore state from checkpoint: configured policy "static" differs from state checkpoint policy "none", please drain this node and delete the CPU manager checkpoint file "/root/cpu_manager_state" before restarting Kubelet',
    );
  });

  test("none: nothing allocated, no cpuset given", async () => {
    const { opts } = setup({ policyName: "none" });
    const m = createCPUManager(opts);
    await m.start(runtime([], []).rt);
    expect(m.admit(guaranteed("g1", "1"), [])).toBeUndefined();
    expect(m.cpuAffinity("g1", "app")).toBe("");
    expect(m.allocatableCPUs()).toEqual([]);
  });
});
