// A claim's node expansion: when it is due (the PV grown past the claim's status capacity, the node's
// turn by the claim's resize status), the order of the claim patches around NodeExpandVolume, the
// request's paths and size, and the refusals.
import { describe, expect, test } from "bun:test";
import { expandIfDue, nodeExpandNotSupported } from "../../../../src/pod/volumes/csi/expander.ts";
import type { CSINodeClient, NodeExpandVolumeRequest } from "../../../../src/pod/volumes/csi/node-client.ts";
import { persistentCSIVolumeSpec } from "../../../../src/pod/volumes/csi/volume-spec.ts";
import { nodeExpansionDue, nodeExpansionFinishedPatch, type ExpandableClaim } from "../../../../src/pod/volumes/resize-util.ts";

const spec = persistentCSIVolumeSpec("pv-a", { driver: "drv", volumeHandle: "vol-1" }, { accessModes: ["ReadWriteOnce"], mountOptions: [] }, false);
const claim = (status: ExpandableClaim["status"], rv = "7"): ExpandableClaim => ({ metadata: { name: "data", namespace: "ns", resourceVersion: rv }, status });
const pending = (conditions: { type: string }[] = []) =>
  claim({ capacity: { storage: "1Gi" }, allocatedResourceStatuses: { storage: "NodeResizePending" }, conditions });

describe("nodeExpansionDue (upstream volumeNeedsExpansion and runPreCheck)", () => {
  test("the PV grown past the claim's capacity, the node's turn: the new and old sizes", () => {
    expect(nodeExpansionDue(pending(), "2Gi", false)).toEqual({ newSize: "2Gi", oldSize: "1Gi" });
    const inProgress = claim({ capacity: { storage: "1Gi" }, allocatedResourceStatuses: { storage: "NodeResizeInProgress" } });
    expect(nodeExpansionDue(inProgress, "2Gi", false)).toEqual({ newSize: "2Gi", oldSize: "1Gi" });
  });
  test.each([
    ["a read-only mount", pending(), "2Gi", true],
    ["the PV not larger (1024Mi = 1Gi)", pending(), "1024Mi", false],
    ["no PV capacity", pending(), undefined, false],
    ["no status capacity", claim({ allocatedResourceStatuses: { storage: "NodeResizePending" } }), "2Gi", false],
    ["no resize status (not the node's turn)", claim({ capacity: { storage: "1Gi" } }), "2Gi", false],
    [
      "the controller still resizing",
      claim({ capacity: { storage: "1Gi" }, allocatedResourceStatuses: { storage: "ControllerResizeInProgress" } }),
      "2Gi",
      false,
    ],
    ["the node's expansion infeasible", claim({ capacity: { storage: "1Gi" }, allocatedResourceStatuses: { storage: "NodeResizeInfeasible" } }), "2Gi", false],
    ["a capacity that is no quantity", pending(), "two", false],
  ] as const)("not due: %s", (_what, pvc, capacity, readOnly) => {
    expect(nodeExpansionDue(pvc, capacity, readOnly)).toBeUndefined();
  });
  test("the finished patch: new capacity, the storage resize status removed, only resize conditions dropped", () => {
    const pvc = pending([{ type: "FileSystemResizePending" }, { type: "Resizing" }, { type: "ModifyingVolume" }]);
    expect(nodeExpansionFinishedPatch(pvc, "2Gi")).toEqual({
      metadata: { resourceVersion: "7" },
      status: { capacity: { storage: "2Gi" }, allocatedResourceStatuses: { storage: null }, conditions: [{ type: "ModifyingVolume" }] },
    });
  });
});

function fakes(caps: string[]) {
  const calls: string[] = [];
  const expanded: NodeExpandVolumeRequest[] = [];
  const patches: { path: string; body: object }[] = [];
  const client = {
    nodeGetCapabilities: async () => caps,
    nodeExpandVolume: async (_e: string, req: NodeExpandVolumeRequest) => {
      calls.push("expand");
      expanded.push(req);
    },
  } as unknown as CSINodeClient;
  const patch = async (path: string, body: object) => {
    calls.push("patch");
    patches.push({ path, body });
    // The API server's answer: the claim with the patch applied and a new resourceVersion.
    return {
      metadata: { name: "data", namespace: "ns", uid: "c1", resourceVersion: String(7 + patches.length) },
      status: { ...pending().status, ...(body as { status: object }).status },
    };
  };
  return { deps: { rootDir: "/r", client, patch }, calls, expanded, patches };
}

describe("expandIfDue (upstream NodeExpander.expandOnPlugin, csi expander NodeExpand)", () => {
  const req = (pvc: ExpandableClaim, capacity = "2Gi") => ({ podUid: "u1", spec, endpoint: () => "unix:///csi.sock", claim: pvc, capacity });

  test("in progress, NodeExpandVolume at the publish and staging paths, then the new capacity on the patched claim", async () => {
    const f = fakes(["STAGE_UNSTAGE_VOLUME", "EXPAND_VOLUME"]);
    expect(await expandIfDue(f.deps, req(pending()))).toBe(true);
    expect(f.calls).toEqual(["patch", "expand", "patch"]);
    expect(f.patches[0]).toEqual({
      path: "/api/v1/namespaces/ns/persistentvolumeclaims/data/status",
      body: { metadata: { resourceVersion: "7" }, status: { allocatedResourceStatuses: { storage: "NodeResizeInProgress" } } },
    });
    expect(f.expanded[0]).toMatchObject({
      volumeId: "vol-1",
      volumePath: "/r/pods/u1/volumes/kubernetes.io~csi/pv-a/mount",
      requiredBytes: 2 * 1024 ** 3,
      volumeCapability: { mount: { fsType: "" }, accessMode: { mode: "SINGLE_NODE_WRITER" } },
    });
    expect(f.expanded[0]!.stagingTargetPath).toStartWith("/r/plugins/kubernetes.io/csi/drv/");
    expect(f.patches[1]!.body).toMatchObject({ metadata: { resourceVersion: "8" }, status: { capacity: { storage: "2Gi" } } });
  });

  test("a claim already in progress is not marked again; a driver that does not stage gets no staging path", async () => {
    const f = fakes(["EXPAND_VOLUME"]);
    const inProgress = claim({ capacity: { storage: "1Gi" }, allocatedResourceStatuses: { storage: "NodeResizeInProgress" } });
    expect(await expandIfDue(f.deps, req(inProgress))).toBe(true);
    expect(f.calls).toEqual(["expand", "patch"]);
    expect(f.expanded[0]!.stagingTargetPath).toBe("");
  });

  test("nothing due: no call at all, the driver not even looked up", async () => {
    const f = fakes(["EXPAND_VOLUME"]);
    const unregistered = () => {
      throw new Error("driver name drv not found in the list of registered CSI drivers");
    };
    expect(await expandIfDue(f.deps, { ...req(pending(), "1Gi"), endpoint: unregistered })).toBe(false);
    expect(f.calls).toEqual([]);
  });

  test("a driver without EXPAND_VOLUME: upstream's refusal, the claim untouched", async () => {
    const f = fakes(["STAGE_UNSTAGE_VOLUME"]);
    await expect(expandIfDue(f.deps, req(pending()))).rejects.toThrow(nodeExpandNotSupported("drv"));
    expect(f.calls).toEqual([]);
  });

  test("the driver's failure: the claim stays in progress, for the next sync to try again", async () => {
    const f = fakes(["EXPAND_VOLUME"]);
    f.deps.client.nodeExpandVolume = async () => {
      throw new Error("rpc error: code = Internal desc = no space");
    };
    await expect(expandIfDue(f.deps, req(pending()))).rejects.toThrow(
      "Expander.NodeExpand failed to expand the volume : rpc error: code = Internal desc = no space",
    );
    expect(f.patches).toHaveLength(1);
  });
});

describe("expandIfDue for a raw block volume", () => {
  test("the block capability at the per-pod block publish path and the block staging path", async () => {
    const f = fakes(["STAGE_UNSTAGE_VOLUME", "EXPAND_VOLUME"]);
    const req = { podUid: "u1", spec, endpoint: () => "unix:///csi.sock", claim: pending(), capacity: "2Gi", block: true };
    expect(await expandIfDue(f.deps, req)).toBe(true);
    expect(f.expanded[0]).toMatchObject({
      volumePath: "/r/plugins/kubernetes.io/csi/volumeDevices/publish/pv-a/u1",
      stagingTargetPath: "/r/plugins/kubernetes.io/csi/volumeDevices/staging/pv-a",
      volumeCapability: { block: {}, accessMode: { mode: "SINGLE_NODE_WRITER" } },
    });
  });
});
