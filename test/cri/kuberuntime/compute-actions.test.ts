import { describe, expect, test } from "bun:test";
import { computePodActions, shouldContainerBeRestarted } from "../../../src/pod/kuberuntime/compute-actions.ts";
import { hashContainer } from "../../../src/pod/kuberuntime/hash.ts";
import type { KubeContainer, KubePod } from "../../../src/pod/kuberuntime/types.ts";
import type { RuntimeContainerStatus, RuntimePodStatus, RuntimeSandboxStatus } from "../../../src/pod/runtime.ts";

const a: KubeContainer = { name: "a", image: "busybox", command: ["sleep", "1"] };
const b: KubeContainer = { name: "b", image: "busybox", command: ["sleep", "2"] };

function pod(restartPolicy: string, containers = [a, b], initContainers?: KubeContainer[]): KubePod {
  return { metadata: { name: "p", namespace: "ns", uid: "u" }, spec: { restartPolicy, containers, initContainers } };
}

const ready: RuntimeSandboxStatus = { id: "s1", attempt: 0, state: "ready", createdAtMs: 1 };
const notReady: RuntimeSandboxStatus = { ...ready, state: "notready" };

let n = 0;
function cs(spec: KubeContainer, state: RuntimeContainerStatus["state"], extra: Partial<RuntimeContainerStatus> = {}): RuntimeContainerStatus {
  return {
    id: `${spec.name}-${++n}`,
    name: spec.name,
    image: "busybox",
    state,
    createdAtMs: n,
    startedAtMs: n,
    finishedAtMs: state === "exited" ? n + 1 : 0,
    attempt: 0,
    hash: hashContainer(spec),
    ...extra,
  };
}

function status(sandboxes: RuntimeSandboxStatus[], containers: RuntimeContainerStatus[]): RuntimePodStatus {
  return { uid: "u", name: "p", namespace: "ns", sandboxes, containers };
}

describe("computePodActions", () => {
  test("a new pod: create the sandbox (attempt 0) and start every container", () => {
    const act = computePodActions(pod("Always"), status([], []));
    expect(act).toMatchObject({ createSandbox: true, killPod: true, attempt: 0, containersToStart: ["a", "b"], containersToKill: [] });
  });

  test("a converged pod: nothing to do", () => {
    const act = computePodActions(pod("Always"), status([ready], [cs(a, "running"), cs(b, "running")]));
    expect(act).toMatchObject({ createSandbox: false, killPod: false, sandboxId: "s1", containersToStart: [], containersToKill: [] });
  });

  test("a dead sandbox: recreate with the next attempt, killing what is left", () => {
    const act = computePodActions(pod("Always"), status([{ ...notReady, attempt: 2 }], [cs(a, "exited", { exitCode: 137 })]));
    expect(act).toMatchObject({ createSandbox: true, killPod: true, attempt: 3, containersToStart: ["a", "b"] });
  });

  test("a dead sandbox of a Never pod that already ran is not recreated", () => {
    const act = computePodActions(pod("Never"), status([{ ...notReady, attempt: 1 }], [cs(a, "exited", { exitCode: 0 })]));
    expect(act).toMatchObject({ createSandbox: false, killPod: true, containersToStart: [] });
  });

  test("OnFailure: a new sandbox skips containers that succeeded", () => {
    const act = computePodActions(pod("OnFailure"), status([notReady], [cs(a, "exited", { exitCode: 0 }), cs(b, "exited", { exitCode: 1 })]));
    expect(act.containersToStart).toEqual(["b"]);
  });

  test("spec hash changed: kill and restart that container only", () => {
    const running = cs(a, "running", { hash: "deadbeef" });
    const act = computePodActions(pod("Never"), status([ready], [running, cs(b, "running")]));
    expect(act.containersToKill).toEqual([{ id: running.id, name: "a", message: "Container a definition changed, will be restarted" }]);
    expect(act.containersToStart).toEqual(["a"]);
    expect(act.killPod).toBe(false);
  });

  test("liveness failure restarts unless restartPolicy is Never", () => {
    const st = status([ready], [cs(a, "running"), cs(b, "running")]);
    const unhealthy = [{ container: "b", message: "Container b failed liveness probe, will be restarted" }];
    expect(computePodActions(pod("Always"), st, unhealthy)).toMatchObject({
      containersToStart: ["b"],
      containersToKill: [{ name: "b", message: unhealthy[0]?.message }],
    });
    expect(computePodActions(pod("Never"), st, unhealthy)).toMatchObject({ containersToStart: [], containersToKill: [{ name: "b" }] });
  });

  test.each([
    ["Always", 0, ["a"], false],
    ["Always", 1, ["a"], false],
    ["OnFailure", 0, [], false],
    ["OnFailure", 1, ["a"], false],
    ["Never", 1, [], false],
  ])("restartPolicy %s, a exited %p → start %p", (policy, exitCode, start, killPod) => {
    const act = computePodActions(pod(policy), status([ready], [cs(a, "exited", { exitCode }), cs(b, "running")]));
    expect(act.containersToStart).toEqual(start);
    expect(act.killPod).toBe(killPod);
  });

  test("everything exited and nothing to start: kill the pod (stop its sandbox)", () => {
    const act = computePodActions(pod("Never"), status([ready], [cs(a, "exited", { exitCode: 0 }), cs(b, "exited", { exitCode: 2 })]));
    expect(act).toMatchObject({ killPod: true, createSandbox: false, containersToStart: [] });
  });

  test("the newest status of a container decides (restart history is ignored)", () => {
    const old = cs(a, "exited", { exitCode: 1, attempt: 0 });
    const cur = cs(a, "running", { attempt: 1 });
    const act = computePodActions(pod("Always", [a]), status([ready], [old, cur]));
    expect(act.containersToStart).toEqual([]);
  });

  describe("init containers", () => {
    const i1: KubeContainer = { name: "i1", image: "busybox" };
    const i2: KubeContainer = { name: "i2", image: "busybox" };
    const p = (policy = "Always") => pod(policy, [a], [i1, i2]);

    test("a new sandbox starts the first init container only", () => {
      expect(computePodActions(p(), status([], []))).toMatchObject({ createSandbox: true, nextInitContainer: "i1", containersToStart: [] });
    });
    test("after i1 succeeded, i2 is next", () => {
      expect(computePodActions(p(), status([ready], [cs(i1, "exited", { exitCode: 0 })])).nextInitContainer).toBe("i2");
    });
    test("while an init container runs, nothing else starts", () => {
      const act = computePodActions(p(), status([ready], [cs(i1, "exited", { exitCode: 0 }), cs(i2, "running")]));
      expect(act.nextInitContainer).toBeUndefined();
      expect(act.containersToStart).toEqual([]);
    });
    test("all init containers done: app containers start", () => {
      const act = computePodActions(p(), status([ready], [cs(i1, "exited", { exitCode: 0 }), cs(i2, "exited", { exitCode: 0 })]));
      expect(act.containersToStart).toEqual(["a"]);
    });
    test("a failed init container is retried, or fails a Never pod", () => {
      const st = status([ready], [cs(i1, "exited", { exitCode: 1 })]);
      expect(computePodActions(p("OnFailure"), st).nextInitContainer).toBe("i1");
      expect(computePodActions(p("Never"), st)).toMatchObject({ initFailed: { name: "i1" }, killPod: true });
    });
  });
});

describe("ephemeral containers (upstream EphemeralContainersToStart)", () => {
  const debug: KubeContainer = { name: "debugger", image: "busybox" };
  const withDebug = (p: KubePod): KubePod => ({ ...p, spec: { ...p.spec, ephemeralContainers: [debug] } });

  test("one never started is started, even while an init container runs", () => {
    expect(computePodActions(withDebug(pod("Always")), status([ready], [cs(a, "running"), cs(b, "running")])).ephemeralContainersToStart).toEqual(["debugger"]);
    const init: KubeContainer = { name: "init", image: "busybox" };
    const act = computePodActions(withDebug(pod("Always", [a, b], [init])), status([ready], [cs(init, "running")]));
    expect(act.ephemeralContainersToStart).toEqual(["debugger"]);
    expect(act.containersToStart).toEqual([]);
  });

  test("one that ran, running or exited, is never started again", () => {
    for (const state of ["running", "exited"] as const) {
      const act = computePodActions(withDebug(pod("Always")), status([ready], [cs(a, "running"), cs(b, "running"), cs(debug, state, { exitCode: 1 })]));
      expect(act.ephemeralContainersToStart).toEqual([]);
      expect(act.containersToStart).toEqual([]);
    }
  });

  test("a new sandbox starts only the regular containers", () => {
    expect(computePodActions(withDebug(pod("Always")), status([notReady], [])).ephemeralContainersToStart).toEqual([]);
  });
});

describe("shouldContainerBeRestarted", () => {
  test.each([
    ["never ran", "Never", undefined, true],
    ["running", "Always", "running", false],
    ["created but not started", "Never", "created", true],
    ["unknown state", "Never", "unknown", true],
  ] as const)("%s (%s) → %p", (_n, policy, state, want) => {
    expect(shouldContainerBeRestarted(pod(policy), state ? cs(a, state) : undefined)).toBe(want);
  });
});
