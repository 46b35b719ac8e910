import { describe, expect, test } from "bun:test";
import { boundVolumeFiles, csiDriverFiles, csiSecretFiles, fits, keepAttachment, keepToken, referencedFiles } from "../../../src/pod/autonomy/retention.ts";

const pod = {
  metadata: { namespace: "ns", name: "p", uid: "u" },
  spec: {
    containers: [{ name: "c", env: [{ name: "A", valueFrom: { configMapKeyRef: { name: "cm", key: "k" } } }] }],
    volumes: [{ name: "s", secret: { secretName: "sec" } }],
  },
};

describe("retention", () => {
  test("a pod's secrets and configMaps are kept; secrets only when cached at all", () => {
    expect([...referencedFiles([pod], true)].sort()).toEqual(["configmap_ns_cm.json", "secret_ns_sec.json"]);
    expect([...referencedFiles([pod], false)]).toEqual(["configmap_ns_cm.json"]);
  });

  test("a pod's claims are kept, a generic ephemeral volume's as <pod>-<volume>; the PVs of kept claims", () => {
    const claims = {
      ...pod,
      spec: {
        containers: [{ name: "c" }],
        volumes: [
          { name: "data", persistentVolumeClaim: { claimName: "data-0" } },
          { name: "tmp", ephemeral: { volumeClaimTemplate: {} } },
        ],
      },
    };
    expect([...referencedFiles([claims], false)].sort()).toEqual(["persistentvolumeclaim_ns_data-0.json", "persistentvolumeclaim_ns_p-tmp.json"]);
    expect([...boundVolumeFiles([{ spec: { volumeName: "pv-1" } }, { spec: {} }, { spec: { volumeName: "../x" } }])]).toEqual(["persistentvolume_pv-1.json"]);
  });

  test("the CSIDriver objects of the kept CSI PVs' drivers and of the pods' inline csi volumes", () => {
    const inline = { ...pod, spec: { containers: [{ name: "c" }], volumes: [{ name: "i", csi: { driver: "inline.csi.example" } }, ...pod.spec.volumes] } };
    const volumes = [
      { metadata: { name: "pv-1" }, spec: { csi: { driver: "block.csi.example", volumeHandle: "h1" } } },
      { metadata: { name: "pv-2" }, spec: { csi: { driver: "block.csi.example", volumeHandle: "h2" } } },
      { metadata: { name: "pv-3" }, spec: { hostPath: { path: "/srv" } } },
      { metadata: { name: "pv-4" }, spec: { csi: { driver: "../x", volumeHandle: "h4" } } },
    ];
    expect([...csiDriverFiles([inline], volumes)].sort()).toEqual(["csidriver_block.csi.example.json", "csidriver_inline.csi.example.json"]);
    expect([...csiDriverFiles([pod], [])]).toEqual([]);
  });

  test("the Secrets the kept CSI PVs name for the node and the pods' inline csi volumes' node-publish Secrets", () => {
    const inline = {
      ...pod,
      spec: { containers: [{ name: "c" }], volumes: [{ name: "i", csi: { driver: "d", nodePublishSecretRef: { name: "inline-pub" } } }] },
    };
    const refs = { nodeStageSecretRef: { name: "stage", namespace: "kube-system" }, nodePublishSecretRef: { name: "pub", namespace: "ns" } };
    const volumes = [
      {
        metadata: { name: "pv-1" },
        spec: { csi: { driver: "d", volumeHandle: "h1", ...refs, controllerPublishSecretRef: { name: "ctrl", namespace: "ns" } } },
      },
      { metadata: { name: "pv-2" }, spec: { csi: { driver: "d", volumeHandle: "h2", nodePublishSecretRef: { name: "../x", namespace: "ns" } } } },
      { metadata: { name: "pv-3" }, spec: { csi: { driver: "d", volumeHandle: "h3", nodeStageSecretRef: { name: "no-namespace" } } } },
      { metadata: { name: "pv-4" }, spec: { hostPath: { path: "/srv" } } },
    ];
    expect([...csiSecretFiles([inline], volumes)].sort()).toEqual(["secret_kube-system_stage.json", "secret_ns_inline-pub.json", "secret_ns_pub.json"]);
    expect([...csiSecretFiles([pod], [])]).toEqual([]);
  });

  test.each([
    ["it attaches a kept PV", { spec: { source: { persistentVolumeName: "pv-1" } } }, true],
    ["its PV is not kept", { spec: { source: { persistentVolumeName: "pv-2" } } }, false],
    ["it attaches an inline volume", { spec: { source: { inlineVolumeSpec: {} } } }, false],
    ["it has no spec", {}, false],
  ])("a VolumeAttachment is kept when %s", (_what, va, kept) => {
    expect(keepAttachment(va, new Set(["pv-1"]))).toBe(kept);
  });

  test.each([
    ["its pod is cached and it is valid", "u", 2000, true],
    ["its pod is gone", "v", 2000, false],
    ["it expired", "u", 500, false],
  ])("a token is kept when %s", (_what, podUid, expirationMs, kept) => {
    expect(keepToken({ namespace: "ns", podUid, key: "\n3600", token: "t", expirationMs }, new Set(["u"]), 1000)).toBe(kept);
  });

  test.each([
    [0, 0, 100, 100, true],
    [90, 0, 20, 100, false],
    [90, 30, 40, 100, true],
  ])("used %d, replacing %d bytes with %d, bound %d → fits %p", (used, old, next, max, ok) => {
    expect(fits(used, old, next, max)).toBe(ok);
  });
});
