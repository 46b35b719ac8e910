import { describe, expect, test } from "bun:test";
import { cpuSet, formatCPUSet } from "../../../../src/config/cpuset.ts";
import { allocate, guaranteedCPUs, newStaticPolicy, removeContainer, validateState } from "../../../../src/pod/cm/cpumanager/policy-static.ts";
import { emptyState, setCPUSet } from "../../../../src/pod/cm/cpumanager/state.ts";
import type { ContainerLike, PodLike } from "../../../../src/pod/pod-like.ts";
import { machine } from "./machines.ts";

const res = (cpu: string, memory = "100Mi") => ({ requests: { cpu, memory }, limits: { cpu, memory } });
const ctr = (name: string, cpu?: string, extra: Partial<ContainerLike> = {}): ContainerLike => ({ name, ...(cpu ? { resources: res(cpu) } : {}), ...extra });
const pod = (uid: string, containers: ContainerLike[], initContainers?: ContainerLike[]): PodLike => ({
  metadata: { name: uid, namespace: "default", uid },
  spec: { containers, ...(initContainers ? { initContainers } : {}) },
});

const singleSocketHT = machine(1, 4, 2); // cores {0,4} {1,5} {2,6} {3,7}

function started(reserved = 1, reservedSystemCPUs: number[] = []) {
  const policy = newStaticPolicy(singleSocketHT, reserved, reservedSystemCPUs);
  const state = emptyState();
  validateState(policy, state);
  return { policy, state };
}

describe("reserved CPUs", () => {
  test("taken by topology when not named", () => expect(newStaticPolicy(singleSocketHT, 2, []).reservedCPUs).toEqual([0, 4]));
  test("reservedSystemCPUs when named", () => expect(newStaticPolicy(singleSocketHT, 2, cpuSet(3, 7)).reservedCPUs).toEqual([3, 7]));
  test("a count that does not match: upstream's error", () =>
    expect(() => newStaticPolicy(singleSocketHT, 1, cpuSet(3, 7))).toThrow(
      "[cpumanager] unable to reserve the required amount of CPUs (size of 3,7 did not equal 1)",
    ));
});

describe("guaranteedCPUs", () => {
  test.each([
    ["integer, Guaranteed", pod("p", [ctr("a", "2")]), 2],
    ["1000m is integer", pod("p", [ctr("a", "1000m")]), 1],
    ["fractional", pod("p", [ctr("a", "1500m")]), 0],
    ["Burstable", pod("p", [{ name: "a", resources: { requests: { cpu: "1" } } }]), 0],
    ["BestEffort", pod("p", [ctr("a")]), 0],
  ])("%s", (_n, p, want) => expect(guaranteedCPUs(p, p.spec.containers[0]!)).toBe(want));
});

describe("allocate / remove", () => {
  test("exclusive CPUs leave the shared pool; the reserved stay in it", () => {
    const { policy, state } = started();
    expect(state.defaultCPUSet).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    const p = pod("p1", [ctr("a", "2"), ctr("b", "500m")]);
    expect(formatCPUSet(allocate(policy, state, p, p.spec.containers[0]!)!)).toBe("1,5");
    expect(allocate(policy, state, p, p.spec.containers[1]!)).toBeUndefined();
    expect(formatCPUSet(state.defaultCPUSet)).toBe("0,2-4,6-7");
    // Again: kept, not taken twice.
    expect(formatCPUSet(allocate(policy, state, p, p.spec.containers[0]!)!)).toBe("1,5");
    expect(removeContainer(state, "p1", "a")).toEqual([1, 5]);
    expect(state.defaultCPUSet).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  });

  test("not enough: upstream's error, the state untouched", () => {
    const { policy, state } = started(2);
    const p = pod("p1", [ctr("a", "7")]);
    expect(() => allocate(policy, state, p, p.spec.containers[0]!)).toThrow("not enough cpus available to satisfy request: requested=7, available=6");
    expect(state.assignments.size).toBe(0);
  });

  test("an init container's CPUs are reused by the app container", () => {
    const { policy, state } = started();
    const p = pod("p1", [ctr("app", "2")], [ctr("init", "2")]);
    const init = allocate(policy, state, p, p.spec.initContainers![0]!)!;
    const app = allocate(policy, state, p, p.spec.containers[0]!)!;
    expect(app).toEqual(init);
    // Removing one keeps the CPUs out of the pool while the other holds them.
    expect(removeContainer(state, "p1", "init")).toEqual([]);
    expect(removeContainer(state, "p1", "app")).toEqual(app);
  });

  test("a sidecar's CPUs are not reused", () => {
    const { policy, state } = started();
    const p = pod("p1", [ctr("app", "2")], [ctr("side", "2", { restartPolicy: "Always" })]);
    const side = allocate(policy, state, p, p.spec.initContainers![0]!)!;
    const app = allocate(policy, state, p, p.spec.containers[0]!)!;
    expect(app.filter((c) => side.includes(c))).toEqual([]);
  });
});

describe("validateState as upstream", () => {
  test("a reserved CPU missing from the default set", () => {
    const policy = newStaticPolicy(singleSocketHT, 1, cpuSet(0));
    const s = emptyState();
    s.defaultCPUSet = cpuSet(1, 2, 3, 4, 5, 6, 7);
    setCPUSet(s, "p", "a", cpuSet(0));
    expect(() => validateState(policy, s)).toThrow('not all reserved cpus: "0" are present in defaultCpuSet: "1-7"');
  });
  test("an assignment overlapping the default set", () => {
    const policy = newStaticPolicy(singleSocketHT, 1, cpuSet(0));
    const s = emptyState();
    s.defaultCPUSet = cpuSet(0, 1, 2, 3, 4, 5, 6, 7);
    setCPUSet(s, "p", "a", cpuSet(1));
    expect(() => validateState(policy, s)).toThrow('pod: p, container: a cpuset: "1" overlaps with default cpuset "0-7"');
  });
  test("CPUs that are not the machine's", () => {
    const policy = newStaticPolicy(singleSocketHT, 1, cpuSet(0));
    const s = emptyState();
    s.defaultCPUSet = cpuSet(0, 1);
    expect(() => validateState(policy, s)).toThrow('current set of available CPUs "0-7" doesn\'t match with CPUs in state "0-1"');
  });
  test("assignments without a default set", () => {
    const policy = newStaticPolicy(singleSocketHT, 1, cpuSet(0));
    const s = emptyState();
    setCPUSet(s, "p", "a", cpuSet(1));
    expect(() => validateState(policy, s)).toThrow("default cpuset cannot be empty");
  });
});
