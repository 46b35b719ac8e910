// The API-server double behaves as kube-apiserver for what the kubelet uses: authn, optimistic
// concurrency with upstream's Status bodies, patch types, watch from a resourceVersion, 410 after
// compaction, bookmarks, selectors — and the real kubectl works against it.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startApiServer, type ApiServerDouble } from "../../support/apiserver/index.ts";
import { strategicMerge, mergePatch, jsonPatch } from "../../support/apiserver/patch.ts";

let api: ApiServerDouble;
let dir: string;

beforeAll(async () => {
  api = await startApiServer({ bookmarkIntervalMs: 100 });
  dir = await mkdtemp(join(tmpdir(), "double-test-"));
});
afterAll(async () => {
  await api?.close();
  await rm(dir, { recursive: true, force: true });
});

function call(
  method: string,
  path: string,
  opts: { body?: unknown; token?: string | null; contentType?: string; cert?: { certPem: string; keyPem: string } } = {},
) {
  const headers: Record<string, string> = { accept: "application/json" };
  const token = opts.token === undefined ? api.adminToken : opts.token;
  if (token) headers.authorization = `Bearer ${token}`;
  if (opts.body !== undefined) headers["content-type"] = opts.contentType ?? "application/json";
  return fetch(api.url + path, {
    method,
    headers,
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
    tls: { ca: api.caPem, ...(opts.cert ? { cert: opts.cert.certPem, key: opts.cert.keyPem } : {}) },
  } as RequestInit);
}

async function readLines(res: Response, n: number, enough: (events: any[]) => boolean = (evs) => evs.length >= n): Promise<any[]> {
  const reader = res.body!.getReader();
  const out: any[] = [];
  let buf = "";
  while (!enough(out)) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += new TextDecoder().decode(value);
    let i: number;
    while ((i = buf.indexOf("\n")) >= 0 && !enough(out)) {
      out.push(JSON.parse(buf.slice(0, i)));
      buf = buf.slice(i + 1);
    }
  }
  await reader.cancel();
  return out;
}

describe("authentication and authorization", () => {
  test("no credentials → 401 Unauthorized Status", async () => {
    const r = await call("GET", "/api/v1/nodes", { token: null });
    expect(r.status).toBe(401);
    expect(await r.json()).toMatchObject({ kind: "Status", reason: "Unauthorized", code: 401 });
  });
  test("a client certificate from the cluster CA authenticates as CN/O", async () => {
    const cert = await api.issueClientCert("system:node:cert-node", ["system:nodes"]);
    const r = await call("POST", "/api/v1/nodes", { token: null, cert, body: { metadata: { name: "cert-node" } } });
    expect(r.status).toBe(201);
    expect(api.requests.at(-1)!.user).toBe("system:node:cert-node");
  });
  test("a bootstrap token may create CSRs but not read nodes", async () => {
    const r = await call("GET", "/api/v1/nodes", { token: api.bootstrapToken });
    expect(r.status).toBe(403);
    expect((await r.json()).message).toMatch(
      /^nodes is forbidden: User "system:bootstrap:[a-z0-9]{6}" cannot list resource "nodes" in API group "" at the cluster scope$/,
    );
    const c = await call("GET", "/apis/certificates.k8s.io/v1/certificatesigningrequests", { token: api.bootstrapToken });
    expect(c.status).toBe(200);
  });
});

describe("resources", () => {
  test("create, AlreadyExists, get, 409 Conflict on a stale resourceVersion", async () => {
    const created = await (await call("POST", "/api/v1/nodes", { body: { metadata: { name: "n1" }, status: { capacity: { cpu: "2" } } } })).json();
    expect(created.metadata.uid).toBeString();
    expect(created.status.allocatable).toEqual({ cpu: "2" }); // defaulted from capacity
    const dup = await call("POST", "/api/v1/nodes", { body: { metadata: { name: "n1" } } });
    expect(dup.status).toBe(409);
    expect(await dup.json()).toMatchObject({ reason: "AlreadyExists", message: 'nodes "n1" already exists' });
    const upd = await call("PUT", "/api/v1/nodes/n1", { body: { ...created, metadata: { ...created.metadata, labels: { a: "b" } } } });
    expect(upd.status).toBe(200);
    const stale = await call("PUT", "/api/v1/nodes/n1", { body: created });
    expect(stale.status).toBe(409);
    expect(await stale.json()).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      reason: "Conflict",
      code: 409,
      message: 'Operation cannot be fulfilled on nodes "n1": the object has been modified; please apply your changes to the latest version and try again',
      details: { name: "n1", kind: "nodes" },
    });
    const missing = await call("GET", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/nope");
    expect(await missing.json()).toMatchObject({
      code: 404,
      reason: "NotFound",
      message: 'leases.coordination.k8s.io "nope" not found',
      details: { group: "coordination.k8s.io" },
    });
  });

  test("strategic-merge patch of nodes/status merges conditions by type and keeps the spec", async () => {
    await call("PATCH", "/api/v1/nodes/n1/status", {
      contentType: "application/strategic-merge-patch+json",
      body: {
        spec: { unschedulable: true },
        status: {
          conditions: [
            { type: "Ready", status: "False" },
            { type: "MemoryPressure", status: "False" },
          ],
        },
      },
    });
    const r = await (
      await call("PATCH", "/api/v1/nodes/n1/status", {
        contentType: "application/strategic-merge-patch+json",
        body: { status: { "$setElementOrder/conditions": [{ type: "MemoryPressure" }, { type: "Ready" }], conditions: [{ type: "Ready", status: "True" }] } },
      })
    ).json();
    expect(r.spec.unschedulable).toBeUndefined();
    expect(r.status.conditions).toEqual([
      { type: "MemoryPressure", status: "False" },
      { type: "Ready", status: "True" },
    ]);
    const bad = await call("PATCH", "/api/v1/nodes/n1", { contentType: "application/json-patch+json", body: [{ op: "remove", path: "/metadata/nope" }] });
    expect(bad.status).toBe(400);
  });

  test("selectors filter lists; Table format for kubectl", async () => {
    await call("POST", "/api/v1/nodes", { body: { metadata: { name: "n2", labels: { role: "x" } } } });
    const byLabel = await (await call("GET", "/api/v1/nodes?labelSelector=role%3Dx")).json();
    expect(byLabel.items.map((n: any) => n.metadata.name)).toEqual(["n2"]);
    const byField = await (await call("GET", "/api/v1/nodes?fieldSelector=metadata.name!%3Dn2")).json();
    expect(byField.items.map((n: any) => n.metadata.name)).not.toContain("n2");
    expect(byField.kind).toBe("NodeList");
  });
});

describe("watch", () => {
  test("from a resourceVersion: the changes after it, then live ones and bookmarks", async () => {
    const list = await (await call("GET", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases")).json();
    const rv = list.metadata.resourceVersion;
    await call("POST", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases", {
      body: { metadata: { name: "w1" }, spec: { holderIdentity: "w1" } },
    });
    const res = await call("GET", `/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases?watch=true&resourceVersion=${rv}&allowWatchBookmarks=true`);
    const deletedRv = () => events.find((e) => e.type === "DELETED")?.object.metadata.resourceVersion;
    const events: any[] = [];
    const pending = readLines(res, 0, (evs) => {
      events.splice(0, events.length, ...evs);
      return !!deletedRv() && evs.at(-1)?.type === "BOOKMARK" && Number(evs.at(-1).object.metadata.resourceVersion) >= Number(deletedRv());
    });
    await call("DELETE", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/w1");
    await pending;
    expect(events.filter((e) => e.type !== "BOOKMARK").map((e) => e.type)).toEqual(["ADDED", "DELETED"]);
    expect(events.at(-1)).toMatchObject({ type: "BOOKMARK", object: { kind: "Lease", metadata: { resourceVersion: deletedRv() } } });
  });

  test("a compacted resourceVersion ends the watch with a 410 Expired ERROR event", async () => {
    const old = await api.store.revision();
    await call("POST", "/api/v1/nodes", { body: { metadata: { name: "n3" } } });
    await api.store.compact();
    const res = await call("GET", `/api/v1/nodes?watch=true&resourceVersion=${old - 1}`);
    const [ev] = await readLines(res, 1);
    expect(ev.type).toBe("ERROR");
    expect(ev.object).toMatchObject({ kind: "Status", code: 410, reason: "Expired" });
    expect(ev.object.message).toMatch(/^too old resource version: \d+ \(\d+\)$/);
  });
});

test("pods/eviction: a policy/v1 Eviction deletes the pod gracefully (201 Success); a wrong name is 400, a missing pod 404", async () => {
  const pod = (name: string, nodeName?: string) => ({
    metadata: { name },
    spec: { ...(nodeName ? { nodeName } : {}), containers: [{ name: "c", image: "i" }] },
  });
  const eviction = (name: string, deleteOptions?: object) => ({
    apiVersion: "policy/v1",
    kind: "Eviction",
    metadata: { name, namespace: "default" },
    ...(deleteOptions ? { deleteOptions } : {}),
  });
  expect((await call("POST", "/api/v1/namespaces/default/pods", { body: pod("bound", "n1") })).status).toBe(201);
  expect((await call("POST", "/api/v1/namespaces/default/pods", { body: pod("unbound") })).status).toBe(201);
  const res = await call("POST", "/api/v1/namespaces/default/pods/bound/eviction", { body: eviction("bound", { gracePeriodSeconds: 7 }) });
  expect(res.status).toBe(201);
  expect(await res.json()).toMatchObject({ kind: "Status", status: "Success" });
  // A scheduled pod is marked for its kubelet to stop (graceful deletion), with the eviction's grace.
  expect((await api.store.get("pods/default/bound"))!.metadata).toMatchObject({ deletionGracePeriodSeconds: 7, deletionTimestamp: expect.any(String) });
  expect((await call("POST", "/api/v1/namespaces/default/pods/unbound/eviction", { body: eviction("unbound") })).status).toBe(201);
  expect(await api.store.get("pods/default/unbound")).toBeUndefined();
  const wrong = await call("POST", "/api/v1/namespaces/default/pods/bound/eviction", { body: eviction("other") });
  expect(wrong.status).toBe(400);
  expect((await wrong.json()).message).toBe("name in URL does not match name in Eviction object");
  expect((await call("POST", "/api/v1/namespaces/default/pods/nope/eviction", { body: eviction("nope") })).status).toBe(404);
  const disc = await (await call("GET", "/api/v1")).json();
  expect(disc.resources.find((r: { name: string }) => r.name === "pods/eviction")).toMatchObject({
    group: "policy",
    version: "v1",
    kind: "Eviction",
    verbs: ["create"],
  });
});

test("kubectl get nodes -o wide reads the Table the double serves", async () => {
  const kc = join(dir, "admin.kubeconfig");
  await api.writeKubeconfig(kc, { token: api.adminToken });
  await call("PATCH", "/api/v1/nodes/n2/status", {
    contentType: "application/merge-patch+json",
    body: {
      status: {
        conditions: [{ type: "Ready", status: "True" }],
        nodeInfo: {
          kubeletVersion: "v1.31.0",
          osImage: "Debian GNU/Linux 12 (bookworm)",
          kernelVersion: "6.1.0",
          containerRuntimeVersion: "containerd://1.6.20",
        },
        addresses: [{ type: "InternalIP", address: "10.1.2.3" }],
      },
    },
  });
  const p = Bun.spawn(["kubectl", "--kubeconfig", kc, "get", "nodes", "n2", "-o", "wide"], {
    stdout: "pipe",
    stderr: "pipe",
    env: { ...process.env, HOME: dir },
  });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  expect(err).toBe("");
  expect(code).toBe(0);
  expect(out).toMatch(/^NAME\s+STATUS\s+ROLES\s+AGE\s+VERSION\s+INTERNAL-IP\s+EXTERNAL-IP\s+OS-IMAGE\s+KERNEL-VERSION\s+CONTAINER-RUNTIME\n/);
  expect(out).toMatch(/n2\s+Ready\s+<none>\s+\S+\s+v1\.31\.0\s+10\.1\.2\.3\s+<none>\s+Debian GNU\/Linux 12 \(bookworm\)\s+6\.1\.0\s+containerd:\/\/1\.6\.20/);
});

describe("patch semantics", () => {
  test.each([
    ["merge: null deletes", mergePatch, { a: 1, b: { c: 2 } }, { b: { c: null, d: 3 } }, { a: 1, b: { d: 3 } }],
    [
      "json: add/replace/remove",
      jsonPatch,
      { a: [1], b: 1 },
      [
        { op: "add", path: "/a/-", value: 2 },
        { op: "replace", path: "/b", value: 3 },
        { op: "remove", path: "/a/0" },
      ],
      { a: [2], b: 3 },
    ],
    [
      "strategic: addresses by type, images replaced",
      (t: unknown, p: unknown) => strategicMerge(t, p),
      {
        status: {
          addresses: [
            { type: "InternalIP", address: "1" },
            { type: "Hostname", address: "h" },
          ],
          images: [{ names: ["a"] }],
        },
      },
      { status: { addresses: [{ type: "InternalIP", address: "2" }], images: [{ names: ["b"] }] } },
      {
        status: {
          addresses: [
            { type: "InternalIP", address: "2" },
            { type: "Hostname", address: "h" },
          ],
          images: [{ names: ["b"] }],
        },
      },
    ],
    [
      "strategic: $patch delete in a keyed list",
      (t: unknown, p: unknown) => strategicMerge(t, p),
      { status: { conditions: [{ type: "A" }, { type: "B" }] } },
      { status: { conditions: [{ type: "A", $patch: "delete" }] } },
      { status: { conditions: [{ type: "B" }] } },
    ],
  ] as const)("%s", (_n, fn, target, patch, want) => {
    expect((fn as (t: unknown, p: unknown) => unknown)(target, patch)).toEqual(want);
  });
});
