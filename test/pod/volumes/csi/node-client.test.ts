import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createUnaryGrpcServer, type UnaryGrpcServer } from "../../../../src/cri/grpc-server.ts";
import { csiCodec } from "../../../../src/pod/volumes/csi/driver-client.ts";
import { createCSINodeClient } from "../../../../src/pod/volumes/csi/node-client.ts";

describe("the CSI Node client over a unix socket (csi.v1 wire format)", () => {
  const dir = mkdtempSync(join(tmpdir(), "csi-node-client-"));
  const socket = join(dir, "csi.sock");
  const got: [string, Record<string, unknown>][] = [];
  const record = (m: string, reply: object = {}) => ({
    request: `${m}Request`,
    response: `${m}Response`,
    call: (req: Record<string, unknown>) => (got.push([m, req]), reply),
  });
  let server: UnaryGrpcServer;
  beforeAll(async () => {
    server = createUnaryGrpcServer({
      socketPath: socket,
      service: "csi.v1.Node",
      codec: csiCodec(),
      handlers: {
        NodeGetCapabilities: record("NodeGetCapabilities", { capabilities: [{ rpc: { type: "STAGE_UNSTAGE_VOLUME" } }, { rpc: { type: 6 } }, {}] }),
        NodeStageVolume: record("NodeStageVolume"),
        NodeUnstageVolume: record("NodeUnstageVolume"),
        NodePublishVolume: record("NodePublishVolume"),
        NodeUnpublishVolume: record("NodeUnpublishVolume"),
      },
    });
    await server.start();
  });
  afterAll(async () => {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test("capabilities by name; stage, publish and their reverse carry every field", async () => {
    const c = createCSINodeClient(10_000);
    expect(await c.nodeGetCapabilities(`unix://${socket}`)).toEqual(["STAGE_UNSTAGE_VOLUME", "VOLUME_MOUNT_GROUP"]);
    const capability = { mount: { fsType: "ext4", mountFlags: ["noatime"], volumeMountGroup: "" }, accessMode: { mode: "MULTI_NODE_MULTI_WRITER" } };
    const stage = { volumeId: "v", publishContext: { a: "1" }, stagingTargetPath: "/s", volumeCapability: capability, volumeContext: { k: "v" } };
    await c.nodeStageVolume(socket, stage);
    await c.nodePublishVolume(socket, { ...stage, targetPath: "/t", readonly: true });
    await c.nodeUnpublishVolume(socket, "v", "/t");
    await c.nodeUnstageVolume(socket, "v", "/s");
    expect(got.slice(1).map(([m]) => m)).toEqual(["NodeStageVolume", "NodePublishVolume", "NodeUnpublishVolume", "NodeUnstageVolume"]);
    expect(got[1]![1]).toMatchObject(stage);
    expect(got[2]![1]).toMatchObject({ ...stage, targetPath: "/t", readonly: true });
    expect(got[3]![1]).toMatchObject({ volumeId: "v", targetPath: "/t" });
    expect(got[4]![1]).toMatchObject({ volumeId: "v", stagingTargetPath: "/s" });
  });
});
