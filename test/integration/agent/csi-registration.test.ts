// CSI driver registration against a real control plane (test/support/upstream): bunlet makes its CSINode
// (owned by the Node, with the migrated-plugins annotation) once the node is registered; a CSI driver
// whose registrar socket appears in <rootDir>/plugins_registry is registered — NodeGetInfo on the
// driver's socket, then the Node's csi.volume.kubernetes.io/nodeid annotation and topology label and the
// CSINode's driver entry (node ID, topology keys, allocatable count) written with the node's own
// credentials (Node authorizer, NodeRestriction); the registrar is told it is registered. Removing the
// registrar's socket removes the entry and the annotation; after a bunlet restart the driver found in
// plugins_registry registers again; /metrics counts the registered socket. Needs root, containerd and the upstream binaries.
//
// The driver and its registrar are the test's own (test/support/fake-csi-driver.ts): upstream's
// node-driver-registrar and csi-driver-host-path are not served by this machine's Go module proxy
// (403 Forbidden), so they cannot be built here.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { canRunContainerd } from "../../support/containerd.ts";
import { createFakeCSIDriver, type FakeCSIDriver } from "../../support/fake-csi-driver.ts";
import { startUpstreamCluster, upstreamBinDir, type UpstreamCluster } from "../../support/upstream/index.ts";
import { until } from "../../support/wait.ts";

const bin = upstreamBinDir();
if (!bin.dir) console.warn(`skipping the CSI registration tests: ${bin.why}`);

const DRIVER = "csi.bunlet.test";
const NODE_ID_ANNOTATION = "csi.volume.kubernetes.io/nodeid";
const TOPOLOGY_KEY = "topology.csi.bunlet.test/node";

describe.skipIf(!canRunContainerd() || !bin.dir)("CSI driver registration", () => {
  let c: UpstreamCluster;
  let driver: FakeCSIDriver | undefined;
  const csiNode = () => c.json("get", "csinode", "localhost").catch(() => undefined);
  const node = () => c.json("get", "node", "localhost");
  const driverEntry = async () => (await csiNode())?.spec?.drivers?.find((d: { name: string }) => d.name === DRIVER);

  beforeAll(async () => {
    c = await startUpstreamCluster({ name: "csi", binDir: bin.dir! });
  }, 240_000);
  afterAll(async () => {
    await driver?.stop().catch(() => {});
    await c?.stop();
  }, 120_000);

  test("the CSINode exists once the node is registered, owned by the Node", async () => {
    const n = await node();
    const cn = await until("the CSINode", csiNode, 30_000, { intervalMs: 300 });
    expect(cn.metadata.ownerReferences).toEqual([{ apiVersion: "v1", kind: "Node", name: "localhost", uid: n.metadata.uid }]);
    expect(cn.metadata.annotations["storage.alpha.kubernetes.io/migrated-plugins"]).toBe(
      "kubernetes.io/aws-ebs,kubernetes.io/azure-disk,kubernetes.io/azure-file,kubernetes.io/cinder,kubernetes.io/gce-pd,kubernetes.io/portworx-volume,kubernetes.io/vsphere-volume",
    );
    expect(cn.spec.drivers ?? []).toEqual([]);
    // The node's identity may write its own CSINode and Node status (Node authorizer).
    const asNode = ["--as=system:node:localhost", "--as-group=system:nodes"];
    expect((await c.cp.kubectl("auth", "can-i", "update", "csinodes.storage.k8s.io/localhost", ...asNode)).trim()).toBe("yes");
    expect((await c.cp.kubectl("auth", "can-i", "patch", "nodes/localhost", "--subresource=status", ...asNode)).trim()).toBe("yes");
  }, 60_000);

  test("a driver in plugins_registry is published on the Node and its CSINode; its socket gone, it is removed", async () => {
    driver = createFakeCSIDriver({
      name: DRIVER,
      registrationSocket: join(c.n.rootDir, "plugins_registry", `${DRIVER}-reg.sock`),
      csiSocket: join(c.n.rootDir, "plugins", DRIVER, "csi.sock"),
      nodeId: "bunlet-node-1",
      maxVolumesPerNode: 7,
      topology: { [TOPOLOGY_KEY]: "localhost" },
    });
    await driver.start();
    const entry = await until("the driver in the CSINode", driverEntry, 30_000, { intervalMs: 300 });
    expect(entry).toEqual({ name: DRIVER, nodeID: "bunlet-node-1", topologyKeys: [TOPOLOGY_KEY], allocatable: { count: 7 } });
    const n = await node();
    expect(JSON.parse(n.metadata.annotations[NODE_ID_ANNOTATION])).toEqual({ [DRIVER]: "bunlet-node-1" });
    expect(n.metadata.labels[TOPOLOGY_KEY]).toBe("localhost");
    expect(driver.statuses).toEqual([{ pluginRegistered: true, error: "" }]);
    expect(driver.calls).toEqual(["NodeGetInfo"]);
    const metrics = await (await c.nodeRequest("/metrics")).text();
    expect(metrics).toContain(
      `plugin_manager_total_plugins{socket_path="${join(c.n.rootDir, "plugins_registry", `${DRIVER}-reg.sock`)}",state="actual_state_of_world"} 1`,
    );

    await driver.stopRegistrar();
    await until("the driver out of the CSINode", async () => (await driverEntry()) === undefined && (await csiNode()) !== undefined, 30_000, {
      intervalMs: 300,
    });
    expect((await node()).metadata.annotations[NODE_ID_ANNOTATION]).toBeUndefined();
  }, 90_000);

  test("after a bunlet restart the driver found in plugins_registry registers again", async () => {
    await driver!.startRegistrar();
    await until("registered", driverEntry, 30_000, { intervalMs: 300 });
    const before = driver!.statuses.length;
    await c.n.restart();
    await until("registered by the new bunlet", () => driver!.statuses.length > before, 60_000, { intervalMs: 200 });
    expect(driver!.statuses.at(-1)).toEqual({ pluginRegistered: true, error: "" });
    expect(await driverEntry()).toEqual({ name: DRIVER, nodeID: "bunlet-node-1", topologyKeys: [TOPOLOGY_KEY], allocatable: { count: 7 } });
    expect(c.n.proc.stderr() + c.n.proc.stdout()).toContain(`CSI driver registered driver=${DRIVER}`);
  }, 120_000);
});
