// secret / configMap / projected payloads (upstream secret.MakePayload, configmap.MakePayload,
// projected collectData) and the container env from API objects (makeEnvironmentVariables).
import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { makeEnvironmentVariables } from "../../../src/pod/kuberuntime/env.ts";
import type { KubePod } from "../../../src/pod/kuberuntime/types.ts";
import {
  ObjectNotFoundError,
  configMapPayload,
  projectedPayload,
  secretPayload,
  setUpPodVolume,
  tokenKey,
  trustBundleKey,
  type PodApiObjects,
} from "../../../src/pod/volumes/index.ts";

const b64 = (s: string) => Buffer.from(s).toString("base64");
const text = (p: Record<string, { content: string | Uint8Array; mode?: number }>) =>
  Object.fromEntries(Object.entries(p).map(([k, f]) => [k, [Buffer.from(f.content).toString("utf8"), f.mode]]));

const objs: PodApiObjects = {
  namespace: "ns",
  secrets: new Map<string, any>([
    ["creds", { data: { user: b64("admin"), pass: b64("s3cret") } }],
    ["gone", new ObjectNotFoundError("secret", "gone")],
    ["down", new Error("failed to sync secret cache: timed out waiting for the condition")],
  ]),
  configMaps: new Map<string, any>([
    ["cfg", { data: { "app.conf": "x=1", LOG: "debug", "bad=key": "v" }, binaryData: { blob: b64("\x00\x01") } }],
    ["kube-root-ca.crt", { data: { "ca.crt": "PEM" } }],
    ["nocm", new ObjectNotFoundError("configmap", "nocm")],
  ]),
  tokens: new Map([[tokenKey(undefined, 3607), "jwt-token"]]),
};

const pod: KubePod = { metadata: { name: "p", namespace: "ns", uid: "u1" }, spec: { containers: [{ name: "c" }], serviceAccountName: "default" } };
const ctx = { pod, nodeAllocatable: { cpuMilli: 1000, memoryBytes: 1 << 30 } };

describe("secret and configMap volumes", () => {
  test("all keys with defaultMode 0644; items map key → path with their own mode", () => {
    expect(text(secretPayload({ secretName: "creds" }, objs))).toEqual({ user: ["admin", 0o644], pass: ["s3cret", 0o644] });
    expect(
      text(
        secretPayload(
          {
            secretName: "creds",
            defaultMode: 0o400,
            items: [
              { key: "user", path: "a/u" },
              { key: "pass", path: "p", mode: 0o600 },
            ],
          },
          objs,
        ),
      ),
    ).toEqual({ "a/u": ["admin", 0o400], p: ["s3cret", 0o600] });
    expect(Object.keys(configMapPayload({ name: "cfg" }, objs)).sort()).toEqual(["LOG", "app.conf", "bad=key", "blob"]);
    expect([...Buffer.from(configMapPayload({ name: "cfg" }, objs).blob!.content)]).toEqual([0, 1]);
  });

  test.each([
    ["missing secret", () => secretPayload({ secretName: "gone" }, objs), 'secret "gone" not found'],
    ["missing configMap", () => configMapPayload({ name: "nocm" }, objs), 'configmap "nocm" not found'],
    ["missing secret key", () => secretPayload({ secretName: "creds", items: [{ key: "nope", path: "x" }] }, objs), "references non-existent secret key: nope"],
    [
      "missing configMap key",
      () => configMapPayload({ name: "cfg", items: [{ key: "nope", path: "x" }] }, objs),
      "configmap references non-existent config key: nope",
    ],
    ["API unreachable, even optional", () => secretPayload({ secretName: "down", optional: true }, objs), "failed to sync secret cache"],
    ["no API client", () => secretPayload({ secretName: "creds" }, undefined), "couldn't get secret /creds, no kubeClient defined"],
  ])("%s fails with upstream's message", (_n, f, want) => expect(f).toThrow(want));

  test("optional: a missing object is an empty volume, a missing key is skipped", () => {
    expect(secretPayload({ secretName: "gone", optional: true }, objs)).toEqual({});
    expect(
      text(
        secretPayload(
          {
            secretName: "creds",
            optional: true,
            items: [
              { key: "nope", path: "x" },
              { key: "user", path: "u" },
            ],
          },
          objs,
        ),
      ),
    ).toEqual({ u: ["admin", 0o644] });
  });
});

describe("projected volumes", () => {
  const kubeApiAccess = [
    { serviceAccountToken: { expirationSeconds: 3607, path: "token" } },
    { configMap: { name: "kube-root-ca.crt", items: [{ key: "ca.crt", path: "ca.crt" }] } },
    { downwardAPI: { items: [{ path: "namespace", fieldRef: { fieldPath: "metadata.namespace" } }] } },
  ];
  test("the kube-api-access volume: token, ca.crt, namespace (defaultMode 0644)", () => {
    expect(text(projectedPayload(kubeApiAccess, 0o644, objs, ctx))).toEqual({
      token: ["jwt-token", 0o644],
      "ca.crt": ["PEM", 0o644],
      namespace: ["ns", 0o644],
    });
  });
  test("failures of several sources are aggregated", () => {
    expect(() => projectedPayload([{ secret: { name: "gone" } }, { configMap: { name: "nocm" } }, ...kubeApiAccess], undefined, objs, ctx)).toThrow(
      '[secret "gone" not found, configmap "nocm" not found]',
    );
  });
  test("clusterTrustBundle: the anchors at path (0600 with an fsGroup); a failed lookup is the source's error; no manager is upstream's NoopManager", () => {
    const byName = { name: "example.com:ca:1", path: "ca/bundle.pem" };
    const bySigner = { signerName: "example.com/ca", labelSelector: { matchLabels: { a: "b" } }, path: "signer.pem" };
    const withBundles: PodApiObjects = {
      ...objs,
      trustBundles: new Map<string, string | Error>([
        [trustBundleKey(byName), "PEM-1"],
        [trustBundleKey(bySigner), new Error("combination of signerName and labelSelector matched zero ClusterTrustBundles")],
      ]),
    };
    expect(text(projectedPayload([{ clusterTrustBundle: byName }], 0o440, withBundles, ctx))).toEqual({ "ca/bundle.pem": ["PEM-1", 0o440] });
    expect(text(projectedPayload([{ clusterTrustBundle: byName }], undefined, withBundles, ctx, true))).toEqual({ "ca/bundle.pem": ["PEM-1", 0o600] });
    expect(() => projectedPayload([{ clusterTrustBundle: bySigner }], undefined, withBundles, ctx)).toThrow(
      "combination of signerName and labelSelector matched zero ClusterTrustBundles",
    );
    expect(() => projectedPayload([{ clusterTrustBundle: byName }], undefined, objs, ctx)).toThrow(
      "ClusterTrustBundle projection is not supported in static kubelet mode",
    );
    // optional is part of what is asked (allowMissing), so it is part of the key.
    expect(trustBundleKey({ ...byName, optional: true })).not.toBe(trustBundleKey(byName));
  });
});

describe("makeEnvironmentVariables", () => {
  const env = (c: KubePod["spec"]["containers"][number]) => makeEnvironmentVariables(pod, c, ctx, objs);
  test("envFrom (prefix, invalid keys reported), then env in order with $(VAR) expansion and key refs", () => {
    const r = env({
      name: "c",
      envFrom: [{ configMapRef: { name: "cfg" }, prefix: "CFG_" }, { secretRef: { name: "gone", optional: true } }],
      env: [
        { name: "USER", valueFrom: { secretKeyRef: { name: "creds", key: "user" } } },
        { name: "URL", value: "http://$(USER)@host/$(LATER)/$$(USER)" },
        { name: "LATER", value: "x" },
        { name: "LEVEL", valueFrom: { configMapKeyRef: { name: "cfg", key: "LOG" } } },
        { name: "OPT", valueFrom: { configMapKeyRef: { name: "nocm", key: "k", optional: true } } },
        { name: "OPTKEY", valueFrom: { secretKeyRef: { name: "creds", key: "nokey", optional: true } } },
      ],
    });
    expect(Object.fromEntries(r.envs.map((e) => [e.key, e.value]))).toEqual({
      "CFG_app.conf": "x=1",
      CFG_LOG: "debug",
      USER: "admin",
      URL: "http://admin@host/$(LATER)/$(USER)",
      LATER: "x",
      LEVEL: "debug",
    });
    expect(r.warnings).toEqual([
      "Keys [CFG_bad=key] from the EnvFrom configMap ns/cfg were skipped since they are considered invalid environment variable names.",
    ]);
  });
  test.each([
    ["missing secret", { secretKeyRef: { name: "gone", key: "k" } }, 'secret "gone" not found'],
    ["missing secret key", { secretKeyRef: { name: "creds", key: "k" } }, "couldn't find key k in Secret ns/creds"],
    ["missing configMap key", { configMapKeyRef: { name: "cfg", key: "k" } }, "couldn't find key k in ConfigMap ns/cfg"],
  ])("%s fails with upstream's message", (_n, valueFrom, want) => {
    expect(() => env({ name: "c", env: [{ name: "X", valueFrom }] })).toThrow(want);
  });
  test("the service variables come last, those env does not define, and $(VAR) sees them", () => {
    const services = new Map([
      ["KUBERNETES_SERVICE_HOST", "10.96.0.1"],
      ["KUBERNETES_SERVICE_PORT", "443"],
    ]);
    const c = {
      name: "c",
      env: [
        { name: "URL", value: "https://$(KUBERNETES_SERVICE_HOST):$(KUBERNETES_SERVICE_PORT)" },
        { name: "KUBERNETES_SERVICE_PORT", value: "6443" },
      ],
    };
    expect(makeEnvironmentVariables(pod, c, ctx, objs, services).envs).toEqual([
      { key: "URL", value: "https://10.96.0.1:443" },
      { key: "KUBERNETES_SERVICE_PORT", value: "6443" },
      { key: "KUBERNETES_SERVICE_HOST", value: "10.96.0.1" },
    ]);
  });
});

describe("fsGroup on API volumes (upstream SetVolumeOwnership after each write)", () => {
  test.skipIf(process.getuid?.() !== 0)("secret files and the projected token become group-readable by the fsGroup", () => {
    const root = mkdtempSync(join(tmpdir(), "bunlet-fsg-"));
    try {
      const c = { ...ctx, objects: objs, fsGroup: 4242 };
      const sdir = setUpPodVolume(root, { name: "s", secret: { secretName: "creds", defaultMode: 0o400 } }, c)!;
      expect(statSync(join(sdir, "user")).gid).toBe(4242);
      expect(statSync(join(sdir, "user")).mode & 0o777).toBe(0o440);
      const pdir = setUpPodVolume(root, { name: "p", projected: { sources: [{ serviceAccountToken: { path: "token", expirationSeconds: 3607 } }] } }, c)!;
      expect(statSync(join(pdir, "token")).mode & 0o777).toBe(0o640);
      const plain = setUpPodVolume(
        root,
        { name: "q", projected: { sources: [{ serviceAccountToken: { path: "token", expirationSeconds: 3607 } }] } },
        { ...ctx, objects: objs },
      )!;
      expect(statSync(join(plain, "token")).mode & 0o777).toBe(0o644);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
