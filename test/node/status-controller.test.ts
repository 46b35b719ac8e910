import { describe, expect, test } from "bun:test";
import type { KubeClient, RequestOpts } from "../../src/kube/index.ts";
import { createNodeStatusController } from "../../src/node/status-controller.ts";
import type { NodeStatusInput } from "../../src/node/node-status.ts";
import { TEST_MACHINE, TEST_NODE_STATUS } from "../support/node-facts.ts";
import { createSettlingClock } from "../support/settling-clock.ts";

/** An API server holding one Node: GETs answer it, status PATCHes replace its status (or fail while `failPatch`). */
function fakeNodeApi() {
  const state = { node: { metadata: { name: "n1" }, status: {} as Record<string, unknown> }, gets: 0, patches: 0, failPatch: false };
  const client = {
    config: { server: "https://api" },
    async request(o: RequestOpts<unknown>) {
      if (o.method === "PATCH") {
        if (state.failPatch) throw new Error("PATCH nodes/n1/status: 500 Internal Server Error");
        state.patches++;
        const { "$setElementOrder/conditions": _, ...status } = (o.body as { status: Record<string, unknown> }).status;
        state.node = { ...state.node, status };
      } else state.gets++;
      return structuredClone(state.node);
    },
  } as unknown as KubeClient;
  return { state, client };
}

function controller(volumes: { inUse: string[] }, marked: string[][]) {
  const api = fakeNodeApi();
  const clock = createSettlingClock();
  const gather = async (): Promise<NodeStatusInput> => ({
    ...TEST_NODE_STATUS,
    nowMs: clock.now(),
    machine: TEST_MACHINE,
    runtimeVersion: "containerd://2.0.0",
    readyErrors: [],
    pressure: [],
    images: [],
    hardEvictionThresholds: [],
    volumesInUse: volumes.inUse,
  });
  const status = createNodeStatusController({
    client: api.client,
    clock,
    registration: { nodeName: "n1", hostname: "n1", os: "linux", arch: "amd64", nodeLabels: {}, registerWithTaints: [] },
    registerNode: false,
    gather,
    updateFrequencyMs: 10_000,
    reportFrequencyMs: 60_000,
    markVolumesFromNode: (names) => marked.push([...names]),
  });
  return { api, clock, status };
}

describe("node status: volumes reported in use (upstream markVolumesFromNode)", () => {
  test("the reported set is the list a successful update wrote, or the Node's when nothing needed writing; a failed one marks nothing", async () => {
    const volumes = { inUse: ["kubernetes.io/csi/drv^a"] };
    const marked: string[][] = [];
    const { api, status } = controller(volumes, marked);
    await status.sync();
    expect(api.state.patches).toBe(1);
    expect(marked).toEqual([["kubernetes.io/csi/drv^a"]]);
    await status.sync(); // unchanged: not written, the Node's list marked again
    expect(api.state.patches).toBe(1);
    expect(marked.at(-1)).toEqual(["kubernetes.io/csi/drv^a"]);
    volumes.inUse = ["kubernetes.io/csi/drv^a", "kubernetes.io/csi/drv^b"];
    api.state.failPatch = true;
    const before = marked.length;
    await status.sync();
    expect(marked.length).toBe(before);
    api.state.failPatch = false;
    await status.sync();
    expect(marked.at(-1)).toEqual(["kubernetes.io/csi/drv^a", "kubernetes.io/csi/drv^b"]);
    volumes.inUse = [];
    await status.sync();
    expect(marked.at(-1)).toEqual([]);
  });

  test("syncSoon: the next sync runs at once rather than at the end of the period, once for a burst", async () => {
    const volumes = { inUse: [] as string[] };
    const marked: string[][] = [];
    const { api, clock, status } = controller(volumes, marked);
    status.syncSoon(); // not started: nothing
    status.start();
    await clock.advance(0);
    expect(api.state.gets).toBe(1);
    await clock.advance(1000);
    expect(api.state.gets).toBe(1); // Ready reported: the next sync is 10 s away
    volumes.inUse = ["kubernetes.io/csi/drv^a"];
    status.syncSoon();
    status.syncSoon();
    await clock.advance(0);
    expect(api.state.gets).toBe(2);
    expect(marked.at(-1)).toEqual(["kubernetes.io/csi/drv^a"]);
    await clock.advance(9_999);
    expect(api.state.gets).toBe(2); // the period starts again from the prompt sync
    await clock.advance(1);
    expect(api.state.gets).toBe(3);
    status.stop();
    status.syncSoon();
    await clock.advance(20_000);
    expect(api.state.gets).toBe(3);
  });
});
