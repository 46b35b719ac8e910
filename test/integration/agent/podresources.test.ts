// The node agent serves the podresources API at <rootDir>/pod-resources/kubelet.sock from start to stop,
// even while the container runtime is down (no containerd needed: List is then empty).
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createNodeAgent, type NodeAgent } from "../../../src/agent.ts";
import { loadConfig } from "../../../src/config/load.ts";
import { createUnixGrpcTransport } from "../../../src/cri/grpc.ts";
import { loadPodResourcesProto } from "../../../src/podresources/server.ts";
import { staticPodFlags } from "../../support/agent.ts";
import { freePort } from "../../support/binary.ts";

describe("agent podresources socket", () => {
  const base = mkdtempSync(join(tmpdir(), "bunlet-podres-"));
  let agent: NodeAgent | undefined;
  afterAll(async () => {
    await agent?.stop();
    rmSync(base, { recursive: true, force: true });
  });

  test("List answers on the socket while the agent runs; stop removes the socket", async () => {
    mkdirSync(join(base, "manifests"));
    const rootDir = join(base, "root");
    const loaded = await loadConfig(
      staticPodFlags({
        rootDir,
        manifests: join(base, "manifests"),
        cgroupRoot: `/bunlet-podres-${process.pid}`,
        endpoint: `unix://${join(base, "absent.sock")}`,
        node: "podres",
        port: freePort(),
      }),
    );
    agent = createNodeAgent(loaded, { protectSelf: false, runtimeRetryMs: 200 });
    await agent.start();
    const socket = join(rootDir, "pod-resources", "kubelet.sock");
    const proto = loadPodResourcesProto();
    const client = createUnixGrpcTransport(socket);
    try {
      const reply = await client.unary("/v1.PodResourcesLister/List", proto.encode("ListPodResourcesRequest", {}), 10_000);
      expect(proto.decode("ListPodResourcesResponse", reply)).toEqual({ podResources: [] });
    } finally {
      client.close();
    }
    await agent.stop();
    agent = undefined;
    expect(existsSync(socket)).toBe(false);
  }, 60_000);
});
