import { describe, expect, test } from "bun:test";
import { cacheFileName, encodeCacheEntry, jwtExpirationMs, parseCacheEntry } from "../../../src/pod/autonomy/index.ts";

const pod = { metadata: { name: "web", namespace: "default", uid: "1f2e-3d" }, spec: { containers: [] } };
const secret = { metadata: { name: "creds", namespace: "default" }, data: { password: "c2VjcmV0" } };

describe("cacheFileName", () => {
  test.each([
    ["Pod", { uid: "1f2e-3d" }, "pod_1f2e-3d.json"],
    ["Secret", { namespace: "default", name: "creds" }, "secret_default_creds.json"],
    ["ConfigMap", { namespace: "kube-system", name: "a.b" }, "configmap_kube-system_a.b.json"],
    ["PersistentVolumeClaim", { namespace: "default", name: "data-db-0" }, "persistentvolumeclaim_default_data-db-0.json"],
    ["PersistentVolume", { name: "pvc-1f2e" }, "persistentvolume_pvc-1f2e.json"],
    ["Node", {}, "node.json"],
    ["Services", {}, "services.json"],
  ] as const)("%s %o → %s", (kind, key, file) => expect(cacheFileName(kind, key)).toBe(file));

  test.each(["../etc", "a/b", "", ".."])("refuses %p as a name part", (bad) => {
    expect(() => cacheFileName("Secret", { namespace: "default", name: bad })).toThrow("cannot name a cache file");
  });

  test("a token's file is its pod's UID and a digest of its key", () => {
    const a = cacheFileName("Token", { uid: "u1", tokenKey: "\n3600" });
    expect(a).toMatch(/^token_u1_[0-9a-f]{16}\.json$/);
    expect(cacheFileName("Token", { uid: "u1", tokenKey: "aud\n3600" })).not.toBe(a);
  });
});

describe("parseCacheEntry", () => {
  test("round-trips what encodeCacheEntry writes", () => {
    const e = parseCacheEntry("pod_1f2e-3d.json", encodeCacheEntry("Pod", pod, 0));
    expect(e).toEqual({ kind: "Pod", file: "pod_1f2e-3d.json", object: pod });
  });

  test("a claim and a PV read back as the claim resolution reads them", () => {
    const claim = { metadata: { name: "data", namespace: "default", uid: "c1" }, spec: { volumeName: "pv-1" }, status: { phase: "Bound" } };
    expect(parseCacheEntry("persistentvolumeclaim_default_data.json", encodeCacheEntry("PersistentVolumeClaim", claim, 0))).toMatchObject({ object: claim });
    const pv = { metadata: { name: "pv-1" }, spec: { claimRef: { uid: "c1" }, local: { path: "/mnt/disks/d1" }, nodeAffinity: {} } };
    expect(parseCacheEntry("persistentvolume_pv-1.json", encodeCacheEntry("PersistentVolume", pv, 0))).toMatchObject({ object: pv });
  });

  test.each([
    ["not JSON", "pod_x.json", "{", "pod_x.json: not JSON"],
    ["an unknown version", "pod_x.json", JSON.stringify({ version: 2, kind: "Pod", savedAt: "", object: pod }), "pod_x.json: version"],
    ["an unknown kind", "pod_x.json", JSON.stringify({ version: 1, kind: "Job", savedAt: "", object: pod }), "pod_x.json: kind"],
    ["a pod without a UID", "pod_x.json", encodeCacheEntry("Pod", { metadata: { name: "a", namespace: "b" }, spec: {} }, 0), "pod_x.json: object.metadata.uid"],
    ["a secret value that is not a string", "secret_default_creds.json", encodeCacheEntry("Secret", { ...secret, data: { k: 1 } }, 0), "object.data.k"],
    ["an object in another object's file", "pod_other.json", encodeCacheEntry("Pod", pod, 0), "belongs in pod_1f2e-3d.json"],
    [
      "a claim without a namespace",
      "persistentvolumeclaim_default_c.json",
      encodeCacheEntry("PersistentVolumeClaim", { metadata: { name: "c" }, spec: {}, status: {} }, 0),
      "object.metadata.namespace",
    ],
  ])("%s → an error naming the file and field", (_what, file, text, message) => {
    const e = parseCacheEntry(file, text);
    expect(e).toBeInstanceOf(Error);
    expect((e as Error).message).toContain(message);
  });

  test("an error never quotes a secret's value", () => {
    const text = encodeCacheEntry("Secret", { ...secret, data: { password: 12345 } }, 0).replace("12345", "hunter2");
    const e = parseCacheEntry("secret_default_creds.json", text);
    expect((e as Error).message).not.toContain("hunter2");
  });
});

describe("jwtExpirationMs", () => {
  const jwt = (claims: object) => `h.${Buffer.from(JSON.stringify(claims)).toString("base64url")}.s`;
  test.each([
    [jwt({ exp: 1700000000 }), 1700000000000],
    [jwt({ iat: 1 }), undefined],
    ["opaque", undefined],
    ["a.!!!.b", undefined],
  ])("%p → %p", (token, ms) => expect(jwtExpirationMs(token)).toBe(ms));
});
