// The node info manager against an in-memory API server (nodes, nodes/status patches, csinodes with
// resourceVersion conflicts): what it reads and writes, in upstream's order and with its retries.
import { describe, expect, test } from "bun:test";
import type { Clock } from "../../../../src/clock.ts";
import type { KubeClient, RequestOpts } from "../../../../src/kube/client.ts";
import { ApiError } from "../../../../src/kube/errors.ts";
import { MIGRATED_PLUGINS_ANNOTATION } from "../../../../src/pod/volumes/csi/csinode.ts";
import { createNodeInfoManager } from "../../../../src/pod/volumes/csi/nodeinfo-manager.ts";
import { NODE_ID_ANNOTATION } from "../../../../src/pod/volumes/csi/node-updates.ts";

type Obj = { metadata: Record<string, any>; spec?: any };

function fakeApi(node: Obj) {
  const log: string[] = [];
  let csinode: Obj | undefined;
  let rv = 1;
  let failNext = 0;
  const notFound = (m: string, p: string) => new ApiError(404, "NotFound", "not found", m, p);
  const client = {
    async request<T>(o: RequestOpts<T>): Promise<T> {
      const m = o.method ?? "GET";
      log.push(`${m} ${o.path}${o.body && m === "PATCH" ? ` ${JSON.stringify(o.body)}` : ""}`);
      if (failNext > 0) {
        failNext--;
        throw new ApiError(500, "InternalError", "boom", m, o.path);
      }
      const clone = (x: unknown) => structuredClone(x) as T;
      if (o.path === "/api/v1/nodes/n1") return clone(node);
      if (o.path === "/api/v1/nodes/n1/status" && m === "PATCH") {
        const md = (o.body as { metadata: Record<string, Record<string, string | null>> }).metadata;
        for (const f of ["labels", "annotations"] as const)
          for (const [k, v] of Object.entries(md[f] ?? {})) {
            node.metadata[f] ??= {};
            if (v === null) delete node.metadata[f][k];
            else node.metadata[f][k] = v;
          }
        return clone(node);
      }
      if (o.path === "/apis/storage.k8s.io/v1/csinodes" && m === "POST") {
        csinode = { ...(structuredClone(o.body) as Obj) };
        csinode.metadata.resourceVersion = String(rv++);
        return clone(csinode);
      }
      if (o.path === "/apis/storage.k8s.io/v1/csinodes/n1") {
        if (!csinode) throw notFound(m, o.path);
        if (m === "GET") return clone(csinode);
        if (m === "DELETE") return clone((csinode = undefined));
        const body = structuredClone(o.body) as Obj;
        if (body.metadata.resourceVersion !== csinode.metadata.resourceVersion) throw new ApiError(409, "Conflict", "conflict", m, o.path);
        csinode = body;
        csinode.metadata.resourceVersion = String(rv++);
        return clone(csinode);
      }
      throw notFound(m, o.path);
    },
  } as unknown as KubeClient;
  return {
    client,
    log,
    csinode: () => csinode,
    setCSINode: (c: Obj) => void (csinode = c),
    failNext: (n: number) => void (failNext = n),
  };
}

/** The backoff's pauses pass at once. */
const instant: Pick<Clock, "setTimeout"> = { setTimeout: (fn) => (queueMicrotask(fn), { id: 0 }) };

const node = (): Obj => ({ metadata: { name: "n1", uid: "uid-1", labels: { "kubernetes.io/hostname": "n1" }, annotations: {} } });

describe("the node info manager", () => {
  test("install: the Node's annotation and labels, then a new CSINode with the driver", async () => {
    const n = node();
    const api = fakeApi(n);
    const nim = createNodeInfoManager({ nodeName: "n1", client: () => api.client, clock: instant });
    await nim.installCSIDriver("a.csi", "node-a", 4, { "topology.a/node": "n1" });
    expect(n.metadata.annotations[NODE_ID_ANNOTATION]).toBe('{"a.csi":"node-a"}');
    expect(n.metadata.labels["topology.a/node"]).toBe("n1");
    expect(api.log[1]).toBe(
      `PATCH /api/v1/nodes/n1/status {"metadata":{"labels":{"topology.a/node":"n1"},"annotations":{"${NODE_ID_ANNOTATION}":"{\\"a.csi\\":\\"node-a\\"}"}}}`,
    );
    const c = api.csinode()!;
    expect(c.metadata.ownerReferences).toEqual([{ apiVersion: "v1", kind: "Node", name: "n1", uid: "uid-1" }]);
    expect(c.metadata.annotations[MIGRATED_PLUGINS_ANNOTATION]).toContain("kubernetes.io/gce-pd");
    expect(c.spec.drivers).toEqual([{ name: "a.csi", nodeID: "node-a", topologyKeys: ["topology.a/node"], allocatable: { count: 4 } }]);
    // Again: nothing to write.
    const writes = api.log.length;
    await nim.installCSIDriver("a.csi", "node-a", 4, { "topology.a/node": "n1" });
    expect(api.log.slice(writes).filter((l) => !l.startsWith("GET"))).toEqual([]);
  });

  test("uninstall: the CSINode's entry, then the annotation; the labels stay (as upstream)", async () => {
    const n = node();
    const api = fakeApi(n);
    const nim = createNodeInfoManager({ nodeName: "n1", client: () => api.client, clock: instant });
    await nim.installCSIDriver("a.csi", "node-a", 0, { "topology.a/node": "n1" });
    await nim.installCSIDriver("b.csi", "node-b", 0, undefined);
    await nim.uninstallCSIDriver("a.csi");
    expect(api.csinode()!.spec.drivers.map((d: { name: string }) => d.name)).toEqual(["b.csi"]);
    expect(n.metadata.annotations[NODE_ID_ANNOTATION]).toBe('{"b.csi":"node-b"}');
    expect(n.metadata.labels["topology.a/node"]).toBe("n1");
    await nim.uninstallCSIDriver("b.csi");
    expect(api.csinode()!.spec.drivers).toEqual([]);
    expect(NODE_ID_ANNOTATION in n.metadata.annotations).toBe(false);
  });

  test("a CSINode of a former Node of the same name is deleted and made again", async () => {
    const api = fakeApi(node());
    api.setCSINode({
      metadata: { name: "n1", resourceVersion: "100", ownerReferences: [{ apiVersion: "v1", kind: "Node", name: "n1", uid: "old-uid" }] },
      spec: { drivers: [{ name: "stale.csi", nodeID: "x" }] },
    });
    const nim = createNodeInfoManager({ nodeName: "n1", client: () => api.client, clock: instant });
    await nim.initializeCSINode();
    expect(api.log).toContain("DELETE /apis/storage.k8s.io/v1/csinodes/n1");
    expect(api.csinode()!.metadata.ownerReferences[0].uid).toBe("uid-1");
    expect(api.csinode()!.spec.drivers).toEqual([]);
  });

  test("errors are retried (four tries), then reported with each cause", async () => {
    const api = fakeApi(node());
    const nim = createNodeInfoManager({ nodeName: "n1", client: () => api.client, clock: instant });
    api.failNext(2);
    await nim.installCSIDriver("a.csi", "node-a", 0, undefined);
    expect(api.csinode()!.spec.drivers).toHaveLength(1);
    api.failNext(4);
    await expect(nim.uninstallCSIDriver("a.csi")).rejects.toThrow(
      "error uninstalling CSI driver from CSINode object error updating CSINode: timed out waiting for the condition; caused by: [boom, boom, boom, boom]",
    );
  });

  test("no client (standalone) and an empty node ID are errors", async () => {
    const nim = createNodeInfoManager({ nodeName: "n1", client: () => undefined, clock: instant });
    await expect(nim.installCSIDriver("a.csi", "", 0, undefined)).rejects.toThrow("error adding CSI driver node info: driverNodeID must not be empty");
    await expect(nim.installCSIDriver("a.csi", "x", 0, undefined)).rejects.toThrow(
      "error updating Node object with CSI driver node info: error updating node: timed out waiting for the condition; caused by: [error getting kube client,",
    );
  });
});
