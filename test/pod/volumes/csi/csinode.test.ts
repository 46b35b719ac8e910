import { describe, expect, test } from "bun:test";
import {
  type CSINode,
  driverSpec,
  installDriver,
  MIGRATED_PLUGINS,
  MIGRATED_PLUGINS_ANNOTATION,
  newCSINode,
  nodeOwnsCSINode,
  setMigrationAnnotation,
  uninstallDriver,
} from "../../../../src/pod/volumes/csi/csinode.ts";

const base = (): CSINode => newCSINode("n1", "uid-1");

describe("the CSINode (upstream nodeinfomanager)", () => {
  test("a new CSINode is owned by the Node and names the migrated plugins, sorted", () => {
    const n = base();
    expect(n.metadata.ownerReferences).toEqual([{ apiVersion: "v1", kind: "Node", name: "n1", uid: "uid-1" }]);
    expect(n.metadata.annotations?.[MIGRATED_PLUGINS_ANNOTATION]).toBe([...MIGRATED_PLUGINS].sort().join(","));
    expect(n.spec.drivers).toEqual([]);
    expect(setMigrationAnnotation(n)).toBe(false);
  });

  test("ownership: the Node's name and UID", () => {
    expect(nodeOwnsCSINode(base(), "n1", "uid-1")).toEqual({ owns: true, ownerUID: "uid-1" });
    expect(nodeOwnsCSINode(base(), "n1", "uid-2")).toEqual({ owns: false, ownerUID: "uid-1" });
    const orphan = base();
    orphan.metadata.ownerReferences = [];
    expect(nodeOwnsCSINode(orphan, "n1", "uid-1")).toEqual({ owns: false, ownerUID: "" });
  });

  test("install adds the driver with sorted topology keys and its volume limit", () => {
    const n = installDriver(base(), "a.csi", "node-a", 5, { "t/z": "1", "t/a": "2" });
    expect(n?.spec.drivers).toEqual([{ name: "a.csi", nodeID: "node-a", topologyKeys: ["t/a", "t/z"], allocatable: { count: 5 } }]);
    // The same again changes nothing.
    expect(installDriver(n!, "a.csi", "node-a", 5, { "t/a": "x", "t/z": "y" })).toBeUndefined();
  });

  test.each([
    ["another node ID", "node-b", 5, { "t/a": "2" }],
    ["another limit", "node-a", 7, { "t/a": "2" }],
    ["no limit", "node-a", 0, { "t/a": "2" }],
    ["other topology keys", "node-a", 5, { "t/b": "2" }],
  ])("install again with %s replaces the entry, others kept before it", (_, nodeID, limit, topology) => {
    const first = installDriver(installDriver(base(), "a.csi", "node-a", 5, { "t/a": "2" })!, "b.csi", "nb", 0, {})!;
    const next = installDriver(first, "a.csi", nodeID as string, limit as number, topology as Record<string, string>);
    expect(next?.spec.drivers?.map((d) => d.name)).toEqual(["b.csi", "a.csi"]);
    expect(next?.spec.drivers?.[1]).toEqual(driverSpec("a.csi", nodeID as string, limit as number, topology as Record<string, string>));
  });

  test("a limit above int32 is truncated; a negative one leaves allocatable out", () => {
    expect(driverSpec("a", "n", 2 ** 40, {}).allocatable).toEqual({ count: 2_147_483_647 });
    expect(driverSpec("a", "n", -1, {}).allocatable).toBeUndefined();
    expect(driverSpec("a", "n", 0, {}).allocatable).toBeUndefined();
  });

  test("install fixes a missing migration annotation even when the entry is unchanged", () => {
    const n = installDriver(base(), "a.csi", "node-a", 0, {})!;
    n.metadata.annotations = {};
    expect(installDriver(n, "a.csi", "node-a", 0, {})?.metadata.annotations?.[MIGRATED_PLUGINS_ANNOTATION]).toBeDefined();
  });

  test("uninstall removes only that driver; nothing to do when it is absent", () => {
    const n = installDriver(installDriver(base(), "a.csi", "na", 0, {})!, "b.csi", "nb", 0, {})!;
    expect(uninstallDriver(n, "a.csi")?.spec.drivers?.map((d) => d.name)).toEqual(["b.csi"]);
    expect(uninstallDriver(n, "c.csi")).toBeUndefined();
    expect(n.spec.drivers).toHaveLength(2);
  });
});
