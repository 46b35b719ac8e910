// Sidecar containers (restartable init containers) in computePodActions (upstream
// computeInitContainerActions): start order, startup gating, restarts, kills, and the pod ending.
import { describe, expect, test } from "bun:test";
import { computePodActions } from "../../../src/pod/kuberuntime/compute-actions.ts";
import { hashContainer } from "../../../src/pod/kuberuntime/hash.ts";
import type { KubeContainer, KubePod } from "../../../src/pod/kuberuntime/types.ts";
import type { RuntimeContainerStatus, RuntimePodStatus } from "../../../src/pod/runtime.ts";

const init1: KubeContainer = { name: "init1", image: "busybox" };
const side: KubeContainer = { name: "side", image: "busybox", restartPolicy: "Always" };
const init2: KubeContainer = { name: "init2", image: "busybox" };
const app: KubeContainer = { name: "app", image: "busybox" };
const pod = (restartPolicy = "Always"): KubePod => ({
  metadata: { name: "p", namespace: "ns", uid: "u" },
  spec: { restartPolicy, containers: [app], initContainers: [init1, side, init2] },
});

let n = 0;
const cs = (spec: KubeContainer, state: RuntimeContainerStatus["state"], extra: Partial<RuntimeContainerStatus> = {}): RuntimeContainerStatus => ({
  id: `${spec.name}-${++n}`,
  name: spec.name,
  image: "busybox",
  state,
  createdAtMs: n,
  startedAtMs: n,
  finishedAtMs: 0,
  attempt: 0,
  hash: hashContainer(spec),
  ...extra,
});
const st = (...containers: RuntimeContainerStatus[]): RuntimePodStatus => ({
  uid: "u",
  name: "p",
  namespace: "ns",
  sandboxes: [{ id: "s1", attempt: 0, state: "ready", createdAtMs: 1 }],
  containers,
});
const ok = (c: KubeContainer) => cs(c, "exited", { exitCode: 0 });

describe("sidecar init actions", () => {
  test.each([
    ["nothing ran: the first init container", [], (): boolean => true, ["init1"], []],
    ["init1 done: start the sidecar", [ok(init1)], (): boolean => true, ["side"], []],
    ["sidecar running but its startup probe has not passed: wait", [ok(init1), cs(side, "running")], (): boolean => false, [], []],
    ["sidecar started: start init2", [ok(init1), cs(side, "running")], (): boolean => true, ["init2"], []],
    ["init2 running: wait", [ok(init1), cs(side, "running"), cs(init2, "running")], (): boolean => true, [], []],
    ["all initialized: start app", [ok(init1), cs(side, "running"), ok(init2)], (): boolean => true, [], ["app"]],
    [
      "sidecar exited after initialization: restart it beside app",
      [ok(init1), cs(side, "exited", { exitCode: 1 }), ok(init2), cs(app, "running")],
      (): boolean => true,
      ["side"],
      [],
    ],
    ["sidecar removed after initialization: restart it", [cs(app, "running")], (): boolean => true, ["side"], []],
  ] as const)("%s", (_n, containers, started, inits, apps) => {
    const a = computePodActions(pod(), st(...containers), [], started);
    expect(a.initContainersToStart ?? []).toEqual([...inits]);
    expect(a.containersToStart).toEqual([...apps]);
    expect(a.killPod).toBe(false);
  });

  test("a sidecar failing its startup probe is killed and restarted with the probe's reason", () => {
    const s = cs(side, "running");
    const a = computePodActions(pod(), st(ok(init1), s), [{ container: "side", message: "x", probe: "startup" }], () => false);
    expect(a.containersToKill).toEqual([{ id: s.id, name: "side", message: "Init container side failed startup probe", reason: "startup" }]);
    expect(a.initContainersToStart).toEqual(["side"]);
  });

  test("a sidecar failing liveness is killed and restarted; a changed one too", () => {
    const s = cs(side, "running");
    const a = computePodActions(pod(), st(ok(init1), s, ok(init2), cs(app, "running")), [{ container: "side", message: "x", probe: "liveness" }]);
    expect(a.containersToKill).toMatchObject([{ name: "side", message: "Init container side failed liveness probe", reason: "liveness" }]);
    expect(a.initContainersToStart).toEqual(["side"]);
    const changed = cs(side, "running", { hash: "old" });
    const b = computePodActions(pod(), st(ok(init1), changed, ok(init2), cs(app, "running")));
    expect(b.containersToKill).toMatchObject([{ name: "side", message: "Init container side definition changed" }]);
  });

  test("a regular init container failing under restartPolicy Never fails the pod", () => {
    const a = computePodActions(pod("Never"), st(cs(init1, "exited", { exitCode: 2 })));
    expect(a).toMatchObject({ killPod: true, initFailed: { name: "init1" } });
  });

  test("restartPolicy Never: app done while the sidecar runs → the pod is killed, the sidecar not restarted", () => {
    const a = computePodActions(pod("Never"), st(ok(init1), cs(side, "running"), ok(init2), ok(app)));
    expect(a.killPod).toBe(true);
    expect(a.initContainersToStart).toBeUndefined();
  });
});
