import { describe, expect, test } from "bun:test";
import { reconcileWithApi, type ReconcileDecision } from "../../../src/pod/autonomy/index.ts";
import type { Pod } from "../../../src/pod/types.ts";

const pod = (uid: string, image = "nginx", extra: Partial<Pod["metadata"]> = {}): Pod =>
  ({
    metadata: { name: `p-${uid}`, namespace: "default", uid, annotations: { "kubernetes.io/config.source": "api" }, ...extra },
    spec: { containers: [{ name: "c", image }] },
  }) as unknown as Pod;

describe("reconcileWithApi", () => {
  test.each([
    ["unchanged → adopt", [pod("a")], [pod("a")], "adopt"],
    ["only the mux's annotations differ → adopt", [pod("a")], [pod("a", "nginx", { annotations: { "kubernetes.io/config.seen": "x" } })], "adopt"],
    ["spec changed → update", [pod("a")], [pod("a", "busybox")], "update"],
    ["gone → stop", [pod("a")], [], "stop"],
    ["being deleted → stop", [pod("a")], [pod("a", "nginx", { deletionTimestamp: "2030-01-01T00:00:00Z" })], "stop"],
    ["new → start", [], [pod("a")], "start"],
  ])("%s", (_name, cached, listed, decision) => {
    expect(reconcileWithApi(cached, listed).map((r) => r.decision)).toEqual([decision as ReconcileDecision]);
  });

  test("a pod recreated with the same name is a different UID: the old stops, the new starts", () => {
    const r = reconcileWithApi([pod("a")], [pod("b")]);
    expect(r.map((x) => `${x.uid}:${x.decision}`)).toEqual(["a:stop", "b:start"]);
  });
});
