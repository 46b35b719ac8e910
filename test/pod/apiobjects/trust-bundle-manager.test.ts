// The ClusterTrustBundle manager's pure parts and its choices (upstream pkg/kubelet/clustertrustbundle):
// anchors deduplicated and re-encoded in a per-process order, meta/v1 label selectors, the gate off
// and "no version served" as upstream's NoopManager, the version fallback v1 → v1beta1 → v1alpha1 on
// 404, a discovery failure retried on the next read. The watch against the API-server double is in
// test/integration/pod/trust-bundles.test.ts.
import { describe, expect, test } from "bun:test";
import { realClock } from "../../../src/clock.ts";
import { ApiError, labelSelectorMatcher, type KubeClient } from "../../../src/kube/index.ts";
import { createPodApiObjects } from "../../../src/pod/apiobjects/pod-objects.ts";
import { createTrustBundleManager } from "../../../src/pod/apiobjects/trust-bundle-manager.ts";
import { normalizeTrustAnchors, pemBlocks } from "../../../src/pod/apiobjects/trust-anchors.ts";

const pem = (der: string) => `-----BEGIN CERTIFICATE-----\n${Buffer.from(der).toString("base64")}\n-----END CERTIFICATE-----\n`;
const [A, B, C] = [pem("cert-a"), pem("cert-b"), pem("a much longer certificate body that wraps over sixty-four base64 columns, as Go's encoder does")];

describe("normalizeTrustAnchors", () => {
  test("every block once, re-encoded at 64 columns; the same order for the same salt whatever the input order", () => {
    const one = normalizeTrustAnchors([A + B, `junk before\n${B}`, C], "salt");
    expect(pemBlocks(one).sort()).toEqual([A, B, C].flatMap(pemBlocks).sort());
    expect(one.split("\n").every((l) => l.length <= 64)).toBe(true);
    expect(normalizeTrustAnchors([C, B + A], "salt")).toBe(one);
    expect(normalizeTrustAnchors([], "salt")).toBe("");
  });
  test("the order depends on the salt (a restart), not on the bundles' order", () => {
    const orders = new Set(Array.from({ length: 16 }, (_, i) => normalizeTrustAnchors([A, B, C], `s${i}`)));
    expect(orders.size).toBeGreaterThan(1);
  });
  test("headers inside a block are skipped", () => {
    expect(pemBlocks(`-----BEGIN CERTIFICATE-----\nProc-Type: 4,ENCRYPTED\n\n${Buffer.from("x").toString("base64")}\n-----END CERTIFICATE-----`)).toEqual([
      Buffer.from("x").toString("base64"),
    ]);
  });
});

describe("labelSelectorMatcher (LabelSelectorAsSelector)", () => {
  const l = { app: "web", tier: "front" };
  test.each([
    ["no selector matches nothing", undefined, l, false],
    ["an empty selector matches everything", {}, l, true],
    ["matchLabels", { matchLabels: { app: "web" } }, l, true],
    ["matchLabels mismatch", { matchLabels: { app: "db" } }, l, false],
    ["In", { matchExpressions: [{ key: "tier", operator: "In", values: ["front", "back"] }] }, l, true],
    ["NotIn on a missing key", { matchExpressions: [{ key: "zone", operator: "NotIn", values: ["a"] }] }, l, true],
    ["Exists", { matchExpressions: [{ key: "app", operator: "Exists" }] }, l, true],
    ["DoesNotExist", { matchExpressions: [{ key: "app", operator: "DoesNotExist" }] }, l, false],
    ["ANDed", { matchLabels: { app: "web" }, matchExpressions: [{ key: "tier", operator: "NotIn", values: ["front"] }] }, l, false],
    ["no labels", { matchExpressions: [{ key: "app", operator: "DoesNotExist" }] }, undefined, true],
  ])("%s", (_n, sel, labels, want) => expect(labelSelectorMatcher(sel)(labels)).toBe(want));
  test.each([
    [{ matchExpressions: [{ key: "a", operator: "In", values: [] }] }, "for 'in', 'notin' operators, values set can't be empty"],
    [{ matchExpressions: [{ key: "a", operator: "Exists", values: ["x"] }] }, "values set must be empty for exists and does not exist"],
    [{ matchExpressions: [{ key: "a", operator: "Gt", values: ["1"] }] }, '"Gt" is not a valid label selector operator'],
  ])("refuses %j", (sel, msg) => expect(() => labelSelectorMatcher(sel)).toThrow(msg));
});

/** A client whose discovery serves clustertrustbundles at `served` (404 elsewhere), listing `items`; watches stay open. */
function fakeClient(served: string | undefined, items: object[], opts: { failDiscovery?: () => boolean } = {}) {
  const paths: string[] = [];
  const client = {
    async request(o: { path: string }) {
      paths.push(o.path);
      const m = /^\/apis\/certificates\.k8s\.io\/([^/]+)$/.exec(o.path);
      if (m) {
        if (opts.failDiscovery?.()) throw new ApiError(503, "ServiceUnavailable", "the server is currently unable to handle the request", "GET", o.path);
        if (m[1] === "v1") return { resources: [{ name: "certificatesigningrequests" }] };
        if (m[1] !== served) throw new ApiError(404, "NotFound", "the server could not find the requested resource", "GET", o.path);
        return { resources: [{ name: "clustertrustbundles" }] };
      }
      return { metadata: { resourceVersion: "5" }, items };
    },
    async stream(o: { path: string; signal?: AbortSignal }) {
      paths.push(`${o.path} (watch)`);
      const body = new ReadableStream({ start: (c) => o.signal?.addEventListener("abort", () => c.close(), { once: true }) });
      return new Response(body);
    },
  } as unknown as KubeClient;
  return { client, paths };
}

const bundle = (name: string, trustBundle: string, signerName?: string, labels?: Record<string, string>) => ({
  metadata: { name, labels },
  spec: { trustBundle, ...(signerName ? { signerName } : {}) },
});

describe("the manager", () => {
  test("the gate off: upstream's NoopManager message, and nothing is asked of the API server", async () => {
    const f = fakeClient("v1beta1", []);
    const m = createTrustBundleManager({ client: () => f.client, clock: realClock, enabled: false });
    await expect(m.getTrustAnchorsByName("x", true)).rejects.toThrow("ClusterTrustBundle projection is not supported in static kubelet mode");
    expect(f.paths).toEqual([]);
  });

  test("the node's gate: on unless featureGates says false (GA in v1.37)", async () => {
    const on = fakeClient("v1beta1", [bundle("root", A)]);
    const byDefault = createPodApiObjects({ client: () => on.client, clock: realClock, trustAnchorSalt: "s" });
    expect(await byDefault.trustBundles.getTrustAnchorsByName("root", false)).toBe(normalizeTrustAnchors([A], "s"));
    byDefault.stop();
    const off = fakeClient("v1beta1", [bundle("root", A)]);
    const disabled = createPodApiObjects({ client: () => off.client, clock: realClock, clusterTrustBundleProjection: false });
    await expect(disabled.trustBundles.getTrustAnchorsByName("root", false)).rejects.toThrow(
      "ClusterTrustBundle projection is not supported in static kubelet mode",
    );
    expect(off.paths).toEqual([]);
  });

  test("v1 without clustertrustbundles, v1beta1 404: falls back to v1alpha1 and watches it", async () => {
    const f = fakeClient("v1alpha1", [
      bundle("root", A),
      bundle("example.com:ca:1", B + A, "example.com/ca", { env: "prod" }),
      bundle("example.com:ca:2", C, "example.com/ca", { env: "dev" }),
    ]);
    const m = createTrustBundleManager({ client: () => f.client, clock: realClock, enabled: true, salt: "s" });
    expect(await m.getTrustAnchorsByName("root", false)).toBe(normalizeTrustAnchors([A], "s"));
    expect(m.groupVersion()).toBe("certificates.k8s.io/v1alpha1");
    expect(f.paths.slice(0, 4)).toEqual([
      "/apis/certificates.k8s.io/v1",
      "/apis/certificates.k8s.io/v1beta1",
      "/apis/certificates.k8s.io/v1alpha1",
      "/apis/certificates.k8s.io/v1alpha1/clustertrustbundles",
    ]);
    expect(await m.getTrustAnchorsBySigner("example.com/ca", { matchLabels: { env: "prod" } }, false)).toBe(normalizeTrustAnchors([A, B], "s"));
    expect(await m.getTrustAnchorsBySigner("example.com/ca", {}, false)).toBe(normalizeTrustAnchors([A, B, C], "s"));
    await expect(m.getTrustAnchorsBySigner("example.com/ca", undefined, false)).rejects.toThrow(
      "combination of signerName and labelSelector matched zero ClusterTrustBundles",
    );
    expect(await m.getTrustAnchorsBySigner("example.com/ca", undefined, true)).toBe("");
    await expect(m.getTrustAnchorsByName("nope", false)).rejects.toThrow(
      'while getting ClusterTrustBundle: clustertrustbundle.certificates.k8s.io "nope" not found',
    );
    expect(await m.getTrustAnchorsByName("nope", true)).toBe("");
    await expect(m.getTrustAnchorsBySigner("example.com/ca", { matchExpressions: [{ key: "env", operator: "Lt", values: ["1"] }] }, false)).rejects.toThrow(
      'while parsing label selector: "Lt" is not a valid label selector operator',
    );
    // Discovery ran once.
    expect(f.paths.filter((p) => p === "/apis/certificates.k8s.io/v1").length).toBe(1);
    m.stop();
  });

  test("no version serves them: the NoopManager from then on", async () => {
    const f = fakeClient(undefined, []);
    const m = createTrustBundleManager({ client: () => f.client, clock: realClock, enabled: true });
    await expect(m.getTrustAnchorsByName("x", false)).rejects.toThrow("ClusterTrustBundle projection is not supported in static kubelet mode");
    expect(m.groupVersion()).toBe("none");
  });

  test("a discovery failure is the read's error and is retried on the next read", async () => {
    let fail = true;
    const f = fakeClient("v1beta1", [bundle("root", A)], { failDiscovery: () => fail });
    const m = createTrustBundleManager({ client: () => f.client, clock: realClock, enabled: true, salt: "s" });
    await expect(m.getTrustAnchorsByName("root", false)).rejects.toThrow(
      "failed to ensure informer manager for ClusterTrustBundles: failed to determine which informer manager to choose: the server is currently unable to handle the request",
    );
    fail = false;
    expect(await m.getTrustAnchorsByName("root", false)).toBe(normalizeTrustAnchors([A], "s"));
    expect(m.groupVersion()).toBe("certificates.k8s.io/v1beta1");
    m.stop();
  });
});
