// The test CSI driver's controller on the wire, called as the sidecars call it: the start-up calls, a
// volume created (its directory made), published (its publish context), unpublished and deleted.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createUnixGrpcTransport, GrpcCode, type GrpcError } from "../../src/cri/grpc.ts";
import { controllerCodec, createFakeCSIController, type FakeCSIController } from "./fake-csi-controller.ts";

const codec = controllerCodec();

describe("fake CSI controller", () => {
  const dir = mkdtempSync(join(tmpdir(), "bunlet-fake-csi-controller-"));
  const socket = join(dir, "csi.sock");
  let controller: FakeCSIController;
  const transport = createUnixGrpcTransport(socket);
  async function call<T>(service: string, method: string, req: object): Promise<T> {
    const reply = await transport.unary(`/csi.v1.${service}/${method}`, codec.encode(`${method}Request`, req), 5_000);
    return codec.decode<T>(`${method}Response`, reply);
  }

  beforeAll(async () => {
    controller = createFakeCSIController({ name: "ctl.csi.bunlet.test", socket, volumeDir: (id) => join(dir, "data", id) });
    await controller.start();
  });
  afterAll(async () => {
    transport.close();
    await controller.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test("the start-up calls: name, CONTROLLER_SERVICE, create/delete and publish/unpublish", async () => {
    expect(await call("Identity", "Probe", {})).toEqual({});
    expect(await call("Identity", "GetPluginInfo", {})).toMatchObject({ name: "ctl.csi.bunlet.test" });
    expect(await call("Identity", "GetPluginCapabilities", {})).toEqual({ capabilities: [{ service: { type: "CONTROLLER_SERVICE" } }] });
    expect(await call("Controller", "ControllerGetCapabilities", {})).toEqual({
      capabilities: [{ rpc: { type: "CREATE_DELETE_VOLUME" } }, { rpc: { type: "PUBLISH_UNPUBLISH_VOLUME" } }],
    });
  });

  test("a volume created, published to a node, unpublished and deleted", async () => {
    const created = await call("Controller", "CreateVolume", { name: "pvc-1", capacityRange: { requiredBytes: 1024 }, parameters: { tier: "a" } });
    expect(created).toEqual({ volume: { volumeId: "pvc-1", capacityBytes: 1024, volumeContext: { tier: "a" } } });
    expect(existsSync(join(dir, "data", "pvc-1"))).toBe(true);
    // Idempotent by name, as the spec asks of CreateVolume.
    expect(await call("Controller", "CreateVolume", { name: "pvc-1", capacityRange: { requiredBytes: 1024 } })).toMatchObject({
      volume: { volumeId: "pvc-1" },
    });

    const published = await call("Controller", "ControllerPublishVolume", { volumeId: "pvc-1", nodeId: "node-a" });
    expect(published).toEqual({ publishContext: controller.publishContext("pvc-1", "node-a") });
    expect(controller.attached.get("pvc-1")).toEqual(new Set(["node-a"]));
    await call("Controller", "ControllerUnpublishVolume", { volumeId: "pvc-1", nodeId: "node-a" });
    expect(controller.attached.get("pvc-1")).toEqual(new Set());

    await call("Controller", "DeleteVolume", { volumeId: "pvc-1" });
    expect(existsSync(join(dir, "data", "pvc-1"))).toBe(false);
    await call("Controller", "DeleteVolume", { volumeId: "pvc-1" });
    expect(controller.calls.map((x) => x.method).filter((m) => m.startsWith("Controller") || m.endsWith("Volume"))).toEqual([
      "ControllerGetCapabilities",
      "CreateVolume",
      "CreateVolume",
      "ControllerPublishVolume",
      "ControllerUnpublishVolume",
      "DeleteVolume",
      "DeleteVolume",
    ]);
  });

  test("publishing a volume that does not exist: NOT_FOUND", async () => {
    const e = (await call("Controller", "ControllerPublishVolume", { volumeId: "pvc-gone", nodeId: "node-a" }).catch((x) => x)) as GrpcError;
    expect(e.code).toBe(GrpcCode.NOT_FOUND);
    expect(e.details).toContain('volume "pvc-gone" does not exist');
  });
});
