// Mirror pods: the object built for a static pod, and the reconcile against a fake API client
// (the agent-level proof with containerd and kubectl is test/integration/agent/join-cluster.test.ts).
import { describe, expect, test } from "bun:test";
import { ApiError, type KubeClient } from "../../../src/kube/index.ts";
import { createManualClock } from "../../../src/manual-clock.ts";
import { buildMirrorPod, createMirrorPodManager, isMirrorPodOf } from "../../../src/pod/mirror/index.ts";
import type { Pod } from "../../../src/pod/types.ts";

const staticPod = (hash: string, name = "etcd-n1"): Pod =>
  ({
    metadata: {
      name,
      namespace: "kube-system",
      uid: hash,
      annotations: { "kubernetes.io/config.hash": hash, "kubernetes.io/config.source": "file", "kubernetes.io/config.seen": "2026-01-01T00:00:00Z" },
      labels: { component: "etcd" },
    },
    spec: { nodeName: "n1", containers: [{ name: "etcd", image: "etcd" }] },
    status: { phase: "Running" },
  }) as unknown as Pod;

const mirrorOf = (p: Pod, uid: string, extra: Record<string, unknown> = {}): Pod =>
  ({
    ...p,
    metadata: {
      ...p.metadata,
      uid,
      ...extra,
      annotations: { ...p.metadata.annotations, "kubernetes.io/config.mirror": p.metadata.annotations!["kubernetes.io/config.hash"] },
    },
  }) as Pod;

describe("mirror pod object", () => {
  test("the static pod with config.mirror = its hash, owned by the Node as controller; no uid or status", () => {
    const body = buildMirrorPod(staticPod("abc"), { name: "n1", uid: "node-uid" });
    expect(body).toEqual({
      kind: "Pod",
      apiVersion: "v1",
      metadata: {
        name: "etcd-n1",
        namespace: "kube-system",
        labels: { component: "etcd" },
        annotations: {
          "kubernetes.io/config.hash": "abc",
          "kubernetes.io/config.source": "file",
          "kubernetes.io/config.seen": "2026-01-01T00:00:00Z",
          "kubernetes.io/config.mirror": "abc",
        },
        ownerReferences: [{ apiVersion: "v1", kind: "Node", name: "n1", uid: "node-uid", controller: true }],
      },
      spec: { nodeName: "n1", containers: [{ name: "etcd", image: "etcd" }] } as Pod["spec"],
    });
  });

  test.each([
    ["same name and hash", mirrorOf(staticPod("abc"), "m1"), true],
    ["another hash", mirrorOf(staticPod("old"), "m1"), false],
    ["another name", mirrorOf(staticPod("abc", "other-n1"), "m1"), false],
    ["no mirror annotation", { ...staticPod("abc") }, false],
  ])("isMirrorPodOf: %s", (_what, mirror, expected) => {
    expect(isMirrorPodOf(mirror as Pod, staticPod("abc"))).toBe(expected);
  });
});

describe("mirror pod reconcile", () => {
  function setup() {
    const calls: { method: string; path: string; body: any }[] = [];
    let fail: ApiError | undefined;
    const client = {
      request: async (o: any) => {
        calls.push({ method: o.method, path: o.path, body: o.body });
        if (fail) throw fail;
        return {};
      },
    } as unknown as KubeClient;
    const state = { statics: [] as Pod[], mirrors: [] as Pod[], terminating: new Set<string>(), node: { metadata: { name: "n1", uid: "node-uid" } } as any };
    const m = createMirrorPodManager({
      client,
      clock: createManualClock(0),
      staticPods: () => state.statics,
      mirrorPods: () => state.mirrors,
      node: () => state.node,
      staticPodTerminating: (n) => state.terminating.has(n),
    });
    return { m, calls, state, setFail: (e?: ApiError) => (fail = e) };
  }

  test("a static pod without a mirror gets one; none while the Node is unknown or being deleted", async () => {
    const { m, calls, state } = setup();
    state.statics = [staticPod("abc")];
    state.node = undefined;
    await m.syncOnce();
    state.node = { metadata: { name: "n1", deletionTimestamp: "2026-01-01T00:00:00Z", uid: "x" } };
    await m.syncOnce();
    expect(calls).toEqual([]);
    state.node = { metadata: { name: "n1", uid: "node-uid" } };
    await m.syncOnce();
    expect(calls.map((c) => `${c.method} ${c.path}`)).toEqual(["POST /api/v1/namespaces/kube-system/pods"]);
    expect(calls[0]!.body.metadata.ownerReferences[0].uid).toBe("node-uid");
  });

  test("an up-to-date mirror is left alone; an outdated or deleted one is replaced (grace 0, UID precondition)", async () => {
    const { m, calls, state } = setup();
    state.statics = [staticPod("new")];
    state.mirrors = [mirrorOf(staticPod("new"), "m0")];
    await m.syncOnce();
    expect(calls).toEqual([]);
    expect(m.mirrorOf(staticPod("new"))?.metadata.uid).toBe("m0");
    state.mirrors = [mirrorOf(staticPod("old"), "m1")];
    expect(m.mirrorOf(staticPod("new"))).toBeUndefined();
    await m.syncOnce();
    state.mirrors = [mirrorOf(staticPod("new"), "m2", { deletionTimestamp: "2026-01-01T00:00:30Z" })];
    await m.syncOnce();
    expect(calls.map((c) => `${c.method} ${c.path}`)).toEqual([
      "DELETE /api/v1/namespaces/kube-system/pods/etcd-n1",
      "POST /api/v1/namespaces/kube-system/pods",
      "DELETE /api/v1/namespaces/kube-system/pods/etcd-n1",
      "POST /api/v1/namespaces/kube-system/pods",
    ]);
    expect(calls[0]!.body).toEqual({ kind: "DeleteOptions", apiVersion: "v1", gracePeriodSeconds: 0, preconditions: { uid: "m1" } });
    expect(calls[3]!.body.metadata.annotations["kubernetes.io/config.mirror"]).toBe("new");
  });

  test("a mirror whose static pod is gone is deleted once the static pod stopped; a failed delete is retried", async () => {
    const { m, calls, state, setFail } = setup();
    state.mirrors = [mirrorOf(staticPod("abc"), "m1")];
    state.terminating.add("etcd-n1_kube-system");
    await m.syncOnce();
    expect(calls).toEqual([]);
    state.terminating.clear();
    setFail(new ApiError(500, "InternalError", "boom", "DELETE", "/"));
    await m.syncOnce();
    setFail(undefined);
    await m.syncOnce();
    expect(calls.map((c) => `${c.method} ${c.path}`)).toEqual([
      "DELETE /api/v1/namespaces/kube-system/pods/etcd-n1",
      "DELETE /api/v1/namespaces/kube-system/pods/etcd-n1",
    ]);
    expect(calls[1]!.body).toEqual({ kind: "DeleteOptions", apiVersion: "v1", gracePeriodSeconds: 0 });
  });
});
