import { describe, expect, test } from "bun:test";
import {
  applyNodeUpdates,
  marshalSortedMap,
  NODE_ID_ANNOTATION,
  type NodeMeta,
  nodeMetaPatch,
  removeNodeIDFromNode,
  updateNodeIDInNode,
  updateTopologyLabels,
} from "../../../../src/pod/volumes/csi/node-updates.ts";

const meta = (annotations: Record<string, string> = {}, labels: Record<string, string> = {}): NodeMeta => ({
  annotations: { ...annotations },
  labels: { ...labels },
});

describe("the Node's CSI metadata (upstream nodeinfomanager)", () => {
  test("the node ID joins the annotation's map, keys sorted as Go marshals them", () => {
    const m = meta({ [NODE_ID_ANNOTATION]: '{"z.csi":"n9"}' });
    expect(updateNodeIDInNode("a.csi", "n1")(m)).toBe(true);
    expect(m.annotations[NODE_ID_ANNOTATION]).toBe('{"a.csi":"n1","z.csi":"n9"}');
    expect(updateNodeIDInNode("a.csi", "n1")(m)).toBe(false);
  });

  test("a node ID that changed is replaced", () => {
    const m = meta({ [NODE_ID_ANNOTATION]: '{"a.csi":"old"}' });
    expect(updateNodeIDInNode("a.csi", "new")(m)).toBe(true);
    expect(m.annotations[NODE_ID_ANNOTATION]).toBe('{"a.csi":"new"}');
  });

  test("an annotation that is not a JSON map is an error naming it", () => {
    expect(() => updateNodeIDInNode("a.csi", "n1")(meta({ [NODE_ID_ANNOTATION]: "nope" }))).toThrow(
      `failed to parse node's "${NODE_ID_ANNOTATION}" annotation value ("nope") err=`,
    );
  });

  test("removal drops the driver; the annotation goes with the last one", () => {
    const m = meta({ [NODE_ID_ANNOTATION]: '{"a.csi":"n1","b.csi":"n2"}' });
    expect(removeNodeIDFromNode("a.csi")(m)).toBe(true);
    expect(m.annotations[NODE_ID_ANNOTATION]).toBe('{"b.csi":"n2"}');
    expect(removeNodeIDFromNode("a.csi")(m)).toBe(false);
    expect(removeNodeIDFromNode("b.csi")(m)).toBe(true);
    expect(NODE_ID_ANNOTATION in m.annotations).toBe(false);
    expect(removeNodeIDFromNode("b.csi")(m)).toBe(false);
  });

  test("topology becomes labels; a different existing value is a collision", () => {
    const m = meta({}, { "topology.x/zone": "z1" });
    expect(updateTopologyLabels(undefined)(m)).toBe(false);
    expect(updateTopologyLabels({ "topology.x/zone": "z1", "topology.x/node": "n1" })(m)).toBe(true);
    expect(m.labels).toEqual({ "topology.x/zone": "z1", "topology.x/node": "n1" });
    expect(() => updateTopologyLabels({ "topology.x/zone": "z2" })(m)).toThrow(
      'detected topology value collision: driver reported "topology.x/zone":"z2" but existing label is "topology.x/zone":"z1"',
    );
  });

  test("the patch holds the keys changed, added, and null for those removed", () => {
    const before = meta({ keep: "1", [NODE_ID_ANNOTATION]: '{"a.csi":"n1"}' }, { l: "v" });
    const after = meta({ keep: "1" }, { l: "v" });
    expect(applyNodeUpdates(after, [removeNodeIDFromNode("x.csi"), updateTopologyLabels({ t: "1" })])).toBe(true);
    expect(nodeMetaPatch(before, after)).toEqual({ metadata: { labels: { t: "1" }, annotations: { [NODE_ID_ANNOTATION]: null } } });
    expect(nodeMetaPatch(before, before)).toEqual({ metadata: {} });
  });

  test("marshalSortedMap", () => {
    expect(marshalSortedMap({ b: "2", a: "1" })).toBe('{"a":"1","b":"2"}');
    expect(marshalSortedMap({})).toBe("{}");
  });
});
