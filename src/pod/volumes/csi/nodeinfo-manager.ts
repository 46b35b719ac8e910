// The node info manager (upstream pkg/volume/csi/nodeinfomanager/nodeinfomanager.go) against the API
// server: a registered CSI driver's node ID goes into the Node's csi.volume.kubernetes.io/nodeid
// annotation and its topology into the Node's labels (a strategic merge patch of nodes/<name>/status,
// as upstream's PatchNodeStatus), and its entry into the CSINode of the node (created owned by the
// Node when missing; an object owned by another Node of the same name is deleted first). Every write
// is a read-modify-write retried with upstream's backoff (10 ms × 5, four tries) on any error.
import type { Clock } from "../../../clock.ts";
import { isNotFound } from "../../../kube/errors.ts";
import type { KubeClient } from "../../../kube/client.ts";
import { nodeSchema } from "../../../kube/types.ts";
import { log } from "../../../log.ts";
import { type CSINode, csiNodeSchema, installDriver, newCSINode, nodeOwnsCSINode, setMigrationAnnotation, uninstallDriver } from "./csinode.ts";
import {
  applyNodeUpdates,
  type NodeMeta,
  type NodeUpdate,
  nodeMetaPatch,
  removeNodeIDFromNode,
  updateNodeIDInNode,
  updateTopologyLabels,
} from "./node-updates.ts";

/** Upstream updateBackoff: the pauses between its four tries (Duration 10 ms, Factor 5; no jitter here). */
export const UPDATE_BACKOFF_MS = [10, 50, 250];

export interface NodeInfoManagerDeps {
  nodeName: string;
  /** The node's API client; undefined while there is none (standalone, or before the bootstrap). */
  client: () => KubeClient | undefined;
  clock: Pick<Clock, "setTimeout">;
}

export interface NodeInfoManager {
  /** Upstream InstallCSIDriver: the Node's annotation and labels, then the CSINode's driver entry. */
  installCSIDriver(driverName: string, nodeID: string, maxAttachLimit: number, topology: Record<string, string> | undefined): Promise<void>;
  /** Upstream UninstallCSIDriver: the CSINode's entry, then the Node's annotation entry. */
  uninstallCSIDriver(driverName: string): Promise<void>;
  /** Upstream InitializeCSINodeWithAnnotation: the CSINode exists, owned by this Node, with the migration annotation. */
  initializeCSINode(): Promise<void>;
}

const CSINODES = "/apis/storage.k8s.io/v1/csinodes";

/** Go's utilerrors.NewAggregate(...).Error(). */
const aggregate = (errs: Error[]) => (errs.length === 1 ? errs[0]!.message : `[${errs.map((e) => e.message).join(", ")}]`);

export function createNodeInfoManager(d: NodeInfoManagerDeps): NodeInfoManager {
  let nodeUID = "";
  // Upstream's nim.lock: one read-modify-write at a time.
  let chain: Promise<unknown> = Promise.resolve();
  const locked = <T>(fn: () => Promise<T>): Promise<T> => {
    const run = chain.then(fn, fn);
    chain = run.catch(() => undefined);
    return run;
  };
  const sleep = (ms: number) => new Promise<void>((r) => d.clock.setTimeout(r, ms));
  const clientOr = (what: string): KubeClient => {
    const c = d.client();
    if (!c) throw new Error(what);
    return c;
  };

  /** Upstream wait.ExponentialBackoff(updateBackoff, …) with the errors gathered. */
  async function withBackoff(prefix: string, attempt: () => Promise<void>): Promise<void> {
    const errs: Error[] = [];
    for (let i = 0; ; i++) {
      try {
        return await locked(attempt);
      } catch (e) {
        errs.push(e as Error);
      }
      const pause = UPDATE_BACKOFF_MS[i];
      if (pause === undefined) break;
      await sleep(pause);
    }
    throw new Error(`${prefix}: timed out waiting for the condition; caused by: ${aggregate(errs)}`);
  }

  async function getNode(c: KubeClient) {
    const node = await c.request({ path: `/api/v1/nodes/${d.nodeName}`, schema: nodeSchema });
    nodeUID = node.metadata.uid ?? nodeUID;
    return node;
  }

  async function tryUpdateNode(updates: NodeUpdate[]): Promise<void> {
    const c = clientOr("error getting kube client");
    const node = await getNode(c);
    const before: NodeMeta = { labels: { ...(node.metadata.labels ?? {}) }, annotations: { ...(node.metadata.annotations ?? {}) } };
    const after: NodeMeta = { labels: { ...before.labels }, annotations: { ...before.annotations } };
    if (!applyNodeUpdates(after, updates)) return;
    const patch = nodeMetaPatch(before, after);
    // Upstream's topology update says "updated" for labels already there, and sends an empty patch.
    if (Object.keys(patch.metadata).length === 0) return;
    await c.request({ method: "PATCH", path: `/api/v1/nodes/${d.nodeName}/status`, contentType: "application/strategic-merge-patch+json", body: patch });
  }

  async function getCSINode(c: KubeClient): Promise<CSINode | undefined> {
    try {
      return await c.request({ path: `${CSINODES}/${d.nodeName}`, schema: csiNodeSchema });
    } catch (e) {
      if (isNotFound(e)) return undefined;
      throw e;
    }
  }
  const createCSINode = async (c: KubeClient) => {
    if (nodeUID === "") await getNode(c);
    return c.request({ method: "POST", path: CSINODES, body: newCSINode(d.nodeName, nodeUID), schema: csiNodeSchema });
  };
  const updateCSINode = (c: KubeClient, n: CSINode) => c.request({ method: "PUT", path: `${CSINODES}/${d.nodeName}`, body: n, schema: csiNodeSchema });

  /** Upstream ensureNodeOwnsCSINode: a CSINode of another Node (same name, other UID) is deleted, and this try fails. */
  async function ensureNodeOwnsCSINode(c: KubeClient, n: CSINode): Promise<void> {
    if (nodeUID === "") await getNode(c);
    const { owns, ownerUID } = nodeOwnsCSINode(n, d.nodeName, nodeUID);
    if (owns) return;
    log.info(
      `existing CSINode ${JSON.stringify(n.metadata.name)} is owned by different node (oldNodeID=${JSON.stringify(ownerUID)}, newNodeID=${JSON.stringify(nodeUID)}), cleaning up...`,
    );
    try {
      await c.request({ method: "DELETE", path: `${CSINODES}/${d.nodeName}` });
    } catch (e) {
      throw new Error(`error deleting existing CSINode ${JSON.stringify(n.metadata.name)}: ${(e as Error).message}`);
    }
    throw new Error(
      `CSINode ${JSON.stringify(n.metadata.name)} was owned by different node (oldNodeID=${JSON.stringify(ownerUID)}, newNodeID=${JSON.stringify(nodeUID)}), deleted it`,
    );
  }

  async function tryInstall(driverName: string, nodeID: string, maxAttachLimit: number, topology: Record<string, string>): Promise<void> {
    const c = clientOr("error getting CSI client");
    const n = (await getCSINode(c)) ?? (await createCSINode(c));
    await ensureNodeOwnsCSINode(c, n);
    const next = installDriver(n, driverName, nodeID, maxAttachLimit, topology);
    if (next) await updateCSINode(c, next);
  }

  async function tryUninstall(driverName: string): Promise<void> {
    const c = clientOr("error getting CSI client");
    const n = await getCSINode(c);
    const next = n && uninstallDriver(n, driverName);
    if (next) await updateCSINode(c, next);
  }

  async function tryInitialize(): Promise<void> {
    const c = clientOr("error getting CSI client");
    await getNode(c);
    const n = await getCSINode(c);
    if (!n) return void (await createCSINode(c));
    await ensureNodeOwnsCSINode(c, n);
    if (setMigrationAnnotation(n)) await updateCSINode(c, n);
  }

  return {
    async installCSIDriver(driverName, nodeID, maxAttachLimit, topology) {
      if (nodeID === "") throw new Error("error adding CSI driver node info: driverNodeID must not be empty");
      try {
        await withBackoff("error updating node", () => tryUpdateNode([updateNodeIDInNode(driverName, nodeID), updateTopologyLabels(topology)]));
      } catch (e) {
        throw new Error(`error updating Node object with CSI driver node info: ${(e as Error).message}`);
      }
      try {
        await withBackoff("error updating CSINode", () => tryInstall(driverName, nodeID, maxAttachLimit, topology ?? {}));
      } catch (e) {
        throw new Error(`error updating CSINode object with CSI driver node info: ${(e as Error).message}`);
      }
    },
    async uninstallCSIDriver(driverName) {
      try {
        await withBackoff("error updating CSINode", () => tryUninstall(driverName));
      } catch (e) {
        throw new Error(`error uninstalling CSI driver from CSINode object ${(e as Error).message}`);
      }
      try {
        await withBackoff("error updating node", () => tryUpdateNode([removeNodeIDFromNode(driverName)]));
      } catch (e) {
        throw new Error(`error removing CSI driver node info from Node object ${(e as Error).message}`);
      }
    },
    initializeCSINode: () => withBackoff("error updating CSINode annotation", tryInitialize),
  };
}
