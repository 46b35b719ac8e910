// The podresources server on a temp unix socket, called through the repo's gRPC client (src/cri/grpc.ts).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, statSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createUnixGrpcTransport, GrpcCode, GrpcError, type UnaryTransport } from "../../src/cri/grpc.ts";
import { createPodResourcesServer, loadPodResourcesProto, podResourcesSocketPath, type PodResourcesServer } from "../../src/podresources/server.ts";

const pod = (name: string, namespace: string, containers: string[]) => ({
  metadata: { name, namespace },
  spec: { containers: containers.map((n) => ({ name: n })) },
});

describe("podresources gRPC server", () => {
  const root = mkdtempSync(path.join(tmpdir(), "podres-"));
  const socket = podResourcesSocketPath(root);
  const proto = loadPodResourcesProto();
  const active = [pod("web", "prod", ["app", "log"])];
  const known = [...active, pod("done", "batch", ["job"])];
  let server: PodResourcesServer;
  let client: UnaryTransport;

  const call = async <T>(method: string, reqType: string, req: object, resType: string) =>
    proto.decode<T>(resType, await client.unary(`/v1.PodResourcesLister/${method}`, proto.encode(reqType, req), 10_000));

  beforeAll(async () => {
    server = createPodResourcesServer(socket, { activePods: () => active, pods: () => known });
    await server.start();
    client = createUnixGrpcTransport(socket);
  });
  afterAll(async () => {
    client?.close();
    await server?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  test("the socket is at <rootDir>/pod-resources/kubelet.sock in a 0750 directory", () => {
    expect(socket).toBe(path.join(root, "pod-resources", "kubelet.sock"));
    expect(statSync(socket).isSocket()).toBe(true);
    expect(statSync(path.dirname(socket)).mode & 0o777).toBe(0o750);
  });

  test("List returns the active pods with their containers", async () => {
    const r = await call<{ podResources: { name: string; namespace: string; containers: { name: string; devices: unknown[]; cpuIds: number[] }[] }[] }>(
      "List",
      "ListPodResourcesRequest",
      {},
      "ListPodResourcesResponse",
    );
    expect(r.podResources).toHaveLength(1);
    expect(r.podResources[0]).toMatchObject({ name: "web", namespace: "prod" });
    expect(r.podResources[0]?.containers.map((c) => c.name)).toEqual(["app", "log"]);
    expect(r.podResources[0]?.containers[0]).toMatchObject({ devices: [], cpuIds: [], memory: [] });
  });

  test("Get returns a known pod, even a terminated one", async () => {
    const r = await call<{ podResources: { name: string; containers: { name: string }[] } }>(
      "Get",
      "GetPodResourcesRequest",
      { podName: "done", podNamespace: "batch" },
      "GetPodResourcesResponse",
    );
    expect(r.podResources.name).toBe("done");
    expect(r.podResources.containers.map((c) => c.name)).toEqual(["job"]);
  });

  test("Get of an unknown pod fails with upstream's message (code Unknown, as upstream's plain error)", async () => {
    const e = await call("Get", "GetPodResourcesRequest", { podName: "nope", podNamespace: "prod" }, "GetPodResourcesResponse").catch((x) => x);
    expect(e).toBeInstanceOf(GrpcError);
    expect((e as GrpcError).code).toBe(GrpcCode.UNKNOWN);
    expect((e as GrpcError).details).toBe("pod nope in namespace prod not found");
  });

  test("GetAllocatableResources is empty", async () => {
    const r = await call("GetAllocatableResources", "AllocatableResourcesRequest", {}, "AllocatableResourcesResponse");
    expect(r).toEqual({ devices: [], cpuIds: [], memory: [] });
  });

  test("an unknown method is Unimplemented", async () => {
    const e = await client.unary("/v1.PodResourcesLister/Watch", new Uint8Array(), 10_000).catch((x) => x);
    expect((e as GrpcError).code).toBe(GrpcCode.UNIMPLEMENTED);
  });

  test("stop removes the socket", async () => {
    const other = createPodResourcesServer(path.join(root, "x", "kubelet.sock"), { activePods: () => [], pods: () => [] });
    await other.start();
    expect(existsSync(other.socketPath)).toBe(true);
    await other.stop();
    expect(existsSync(other.socketPath)).toBe(false);
  });
});
