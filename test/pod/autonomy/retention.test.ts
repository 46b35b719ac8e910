import { describe, expect, test } from "bun:test";
import { boundVolumeFiles, fits, keepToken, referencedFiles } from "../../../src/pod/autonomy/retention.ts";

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
