// The RuntimeClass manager (upstream pkg/kubelet/runtimeclass) and its use by createPodSandbox: the
// handler of the pod's RuntimeClass goes to RunPodSandbox; "" or unset, or a node without an API client,
// is the default handler without asking the API server; an unknown class fails the sandbox with
// upstream's NotFound text and event. The real control plane with containerd's runc and crun handlers
// is in test/integration/agent/runtime-class.test.ts.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { realClock } from "../../../src/clock.ts";
import type { CriClient } from "../../../src/cri/client.ts";
import { ApiError, type KubeClient } from "../../../src/kube/index.ts";
import { createRuntimeClassManager, runtimeHandlerOf } from "../../../src/pod/apiobjects/index.ts";
import { createKubeRuntime } from "../../../src/pod/kuberuntime/index.ts";

const dir = mkdtempSync(join(tmpdir(), "bunlet-rtclass-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A client listing these RuntimeClasses (or failing the list); watches stay open. */
function fakeClient(items: object[], fail?: () => boolean) {
  const paths: string[] = [];
  const client = {
    async request(o: { path: string }) {
      paths.push(o.path);
      if (fail?.()) throw new ApiError(503, "ServiceUnavailable", "the server is currently unable to handle the request", "GET", o.path);
      return { metadata: { resourceVersion: "7" }, items };
    },
    async stream(o: { path: string; signal?: AbortSignal }) {
      paths.push(`${o.path} (watch)`);
      return new Response(new ReadableStream({ start: (c) => o.signal?.addEventListener("abort", () => c.close(), { once: true }) }));
    },
  } as unknown as KubeClient;
  return { client, paths };
}

const rc = (name: string, handler: string) => ({ metadata: { name }, handler });

describe("runtimeHandlerOf", () => {
  const classes = new Map([["gvisor", { handler: "runsc" }]]);
  test("the class's handler", () => expect(runtimeHandlerOf(classes, "gvisor")).toBe("runsc"));
  test("an unknown class: upstream's lister NotFound", () =>
    expect(() => runtimeHandlerOf(classes, "kata")).toThrow('runtimeclass.node.k8s.io "kata" not found'));
});

describe("the manager", () => {
  test("unset or empty: the default handler, and the API server is not asked", async () => {
    const f = fakeClient([rc("crun", "crun")]);
    const m = createRuntimeClassManager({ client: () => f.client, clock: realClock });
    expect(await m.lookupRuntimeHandler(undefined)).toBe("");
    expect(await m.lookupRuntimeHandler("")).toBe("");
    expect(f.paths).toEqual([]);
    m.stop();
  });

  test("a named class: one list and a watch of every RuntimeClass, then lookups from memory", async () => {
    const f = fakeClient([rc("crun", "crun"), rc("fast", "runc")]);
    const m = createRuntimeClassManager({ client: () => f.client, clock: realClock });
    expect(await m.lookupRuntimeHandler("crun")).toBe("crun");
    expect(await m.lookupRuntimeHandler("fast")).toBe("runc");
    await expect(m.lookupRuntimeHandler("kata")).rejects.toThrow('runtimeclass.node.k8s.io "kata" not found');
    expect(f.paths.filter((p) => !p.endsWith("(watch)"))).toEqual(["/apis/node.k8s.io/v1/runtimeclasses"]);
    m.stop();
  });

  test("standalone (no API client): every pod runs with the default handler, as upstream's nil manager", async () => {
    const m = createRuntimeClassManager({ client: () => undefined, clock: realClock });
    expect(await m.lookupRuntimeHandler("crun")).toBe("");
  });

  test("the list failing: the lookup fails naming the class and the cause", async () => {
    const f = fakeClient([], () => true);
    const m = createRuntimeClassManager({ client: () => f.client, clock: realClock, syncTimeoutMs: 2_000 });
    await expect(m.lookupRuntimeHandler("crun")).rejects.toThrow("failed to lookup RuntimeClass crun: the server is currently unable to handle the request");
    m.stop();
  });
});

describe("createPodSandbox", () => {
  function runtimeWith(runtimeHandler: (pod: { spec: { runtimeClassName?: string } }) => Promise<string>) {
    const handlers: unknown[] = [];
    const events: { reason: string; message: string }[] = [];
    const impl: Record<string, (...a: any[]) => unknown> = {
      imageStatus: async () => ({ id: "sha256:abc" }),
      runPodSandbox: async (_config: unknown, handler: unknown) => (handlers.push(handler), "sandbox-1"),
      createContainer: async () => "container-1",
      podSandboxStatus: async () => ({ status: { network: { ip: "10.0.0.9" } } }),
      listContainers: async () => [],
      listPodSandbox: async () => [],
    };
    const cri = new Proxy({}, { get: (_t, k: string) => impl[k] ?? (async () => undefined) }) as unknown as CriClient;
    const rt = createKubeRuntime({
      cri,
      podLogsDir: dir,
      rootDir: dir,
      volumeHostPath: () => undefined,
      events: { event: (_ref: unknown, _type: string, reason: string, message: string) => void events.push({ reason, message }) },
      apiObjects: { resolve: async () => undefined, forget: () => {}, runtimeHandler },
    });
    const sync = (uid: string, runtimeClassName?: string) => {
      const pod = { metadata: { name: `p-${uid}`, namespace: "ns", uid }, spec: { runtimeClassName, containers: [{ name: "app", image: "ok/app:1" }] } };
      return rt.syncPod(pod, { uid, name: `p-${uid}`, namespace: "ns", sandboxes: [], containers: [] }, { isInBackOff: () => false, next: () => {} });
    };
    return { handlers, events, sync };
  }

  test("the RuntimeClass's handler is the sandbox's runtime handler; no class, the default", async () => {
    const m = createRuntimeClassManager({ client: () => fakeClient([rc("crun", "crun")]).client, clock: realClock });
    const r = runtimeWith((pod) => m.lookupRuntimeHandler(pod.spec.runtimeClassName));
    expect((await r.sync("u1", "crun")).errors).toEqual([]);
    expect((await r.sync("u2")).errors).toEqual([]);
    expect(r.handlers).toEqual(["crun", ""]);
    m.stop();
  });

  test("an unknown RuntimeClass: no sandbox, CreatePodSandboxError and upstream's FailedCreatePodSandBox event", async () => {
    const m = createRuntimeClassManager({ client: () => fakeClient([]).client, clock: realClock });
    const r = runtimeWith((pod) => m.lookupRuntimeHandler(pod.spec.runtimeClassName));
    const res = await r.sync("u3", "kata");
    const message = 'Failed to create pod sandbox: runtimeclass.node.k8s.io "kata" not found';
    expect(res.errors).toContainEqual({ container: "", reason: "CreatePodSandboxError", message });
    expect(r.events).toContainEqual({ reason: "FailedCreatePodSandBox", message });
    expect(r.handlers).toEqual([]);
    m.stop();
  });
});
