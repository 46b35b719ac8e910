import { describe, expect, test } from "bun:test";
import { createManualClock, type ManualClock } from "../../../../src/manual-clock.ts";
import type { NodeInfoManager } from "../../../../src/pod/volumes/csi/nodeinfo-manager.ts";
import { createCSIRegistrationHandler } from "../../../../src/pod/volumes/csi/registration-handler.ts";

function setup(opts: { nodeGetInfoFails?: boolean; installFails?: boolean; installRetry?: ManualClock; nodeId?: string } = {}) {
  const calls: string[] = [];
  const nim: NodeInfoManager = {
    async installCSIDriver(name, nodeID, max, topology) {
      calls.push(`install ${name} ${nodeID} ${max} ${JSON.stringify(topology)}`);
      if (opts.installFails) throw new Error("error updating CSINode object with CSI driver node info: forbidden");
    },
    async uninstallCSIDriver(name) {
      calls.push(`uninstall ${name}`);
    },
    async initializeCSINode() {},
  };
  const h = createCSIRegistrationHandler({
    nim,
    nodeGetInfo: async (endpoint, timeoutMs) => {
      calls.push(`NodeGetInfo ${endpoint} ${timeoutMs}`);
      if (opts.nodeGetInfoFails) throw new Error("NodeGetInfo: grpc code 14: connection refused");
      return { nodeId: opts.nodeId ?? "node-1", maxVolumesPerNode: 2, accessibleTopology: { "t/node": "n1" } };
    },
    ...(opts.installRetry ? { installRetry: { clock: opts.installRetry, intervalMs: 10_000 } } : {}),
  });
  return { calls, h };
}

describe("the CSI registration handler (upstream csi_plugin.go RegistrationHandler)", () => {
  test("register: NodeGetInfo on the endpoint (upstream's 2-minute timeout), then the node info installed", async () => {
    const { calls, h } = setup();
    await h.validatePlugin("a.csi", "/p/a.sock", ["1.0.0"]);
    await h.registerPlugin("a.csi", "/p/a.sock", ["1.0.0"]);
    expect(calls).toEqual(["NodeGetInfo /p/a.sock 120000", 'install a.csi node-1 2 {"t/node":"n1"}']);
    expect(h.drivers().get("a.csi")?.endpoint).toBe("/p/a.sock");
  });

  test("a driver of the same name needs a higher version to replace the one registered", async () => {
    const { h } = setup();
    await h.registerPlugin("a.csi", "/p/a.sock", ["1.0.0"]);
    expect(() => h.validatePlugin("a.csi", "/p/b.sock", ["1.0.0"])).toThrow(
      'validation failed for CSI Driver a.csi at endpoint /p/b.sock: kubernetes.io/csi: ValidatePlugin for CSI driver "a.csi" failed. Another driver with the same name is already registered with a higher supported version: "1.0.0"',
    );
    expect(() => h.validatePlugin("a.csi", "/p/b.sock", ["1.1.0"])).not.toThrow();
  });

  test.each([
    [[], 'kubernetes.io/csi: ValidatePlugin for CSI driver "a.csi" failed. Plugin returned an empty list for supported versions'],
    [
      ["2.0.0"],
      'None of the versions specified ["2.0.0"] are supported. err=could not find a highest supported version from versions ([2.0.0]) reported: <nil>',
    ],
  ])("versions %p are refused", (versions, message) => {
    const { h } = setup();
    expect(() => h.validatePlugin("a.csi", "/p/a.sock", versions)).toThrow(message);
  });

  test.each([
    ["NodeGetInfo fails", { nodeGetInfoFails: true }, "NodeGetInfo: grpc code 14: connection refused"],
    ["the install fails", { installFails: true }, "forbidden"],
  ])("%s: the error is the registration's, and the driver is unregistered", async (_, opts, message) => {
    const { calls, h } = setup(opts);
    await expect(h.registerPlugin("a.csi", "/p/a.sock", ["1.0.0"])).rejects.toThrow(message);
    expect(calls.at(-1)).toBe("uninstall a.csi");
    expect(h.drivers().size).toBe(0);
  });

  test("de-register uninstalls the driver", async () => {
    const { calls, h } = setup();
    await h.registerPlugin("a.csi", "/p/a.sock", ["1.0.0"]);
    await h.deRegisterPlugin("a.csi", "/p/a.sock");
    expect(calls.at(-1)).toBe("uninstall a.csi");
    expect(h.drivers().size).toBe(0);
  });

  test("node autonomy: a driver whose node info cannot be installed stays registered; the install is tried again until it succeeds", async () => {
    const clock = createManualClock(0);
    const f = setup({ installFails: true, installRetry: clock });
    await f.h.registerPlugin("a.csi", "/p/a.sock", ["1.0.0"]);
    expect(f.h.drivers().get("a.csi")?.endpoint).toBe("/p/a.sock");
    expect(f.calls.filter((c) => c.startsWith("install"))).toHaveLength(1);
    clock.advance(10_000);
    await Promise.resolve();
    expect(f.calls.filter((c) => c.startsWith("install"))).toHaveLength(2);
    expect(clock.pendingTimers()).toBe(1); // failed again: tried again later
    await f.h.deRegisterPlugin("a.csi", "/p/a.sock");
    expect(clock.pendingTimers()).toBe(0);
    expect(f.h.drivers().size).toBe(0);
    await f.h.registerPlugin("a.csi", "/p/a.sock", ["1.0.0"]);
    f.h.stop();
    expect(clock.pendingTimers()).toBe(0);
  });

  test("node autonomy: an install that succeeds later stops the retries; an empty node ID is still refused", async () => {
    const clock = createManualClock(0);
    let fail = true;
    const nim: NodeInfoManager = {
      installCSIDriver: async () => {
        if (fail) throw new Error("error updating Node object with CSI driver node info: connect ECONNREFUSED");
      },
      uninstallCSIDriver: async () => {},
      initializeCSINode: async () => {},
    };
    const nodeGetInfo = async () => ({ nodeId: "node-1", maxVolumesPerNode: 0, accessibleTopology: undefined });
    const h = createCSIRegistrationHandler({ nim, nodeGetInfo, installRetry: { clock, intervalMs: 10_000 } });
    await h.registerPlugin("a.csi", "/p/a.sock", ["1.0.0"]);
    fail = false;
    clock.advance(10_000);
    await Promise.resolve();
    expect(clock.pendingTimers()).toBe(0);
    expect(h.drivers().has("a.csi")).toBe(true);

    const empty = setup({ installFails: true, installRetry: clock, nodeId: "" });
    await expect(empty.h.registerPlugin("b.csi", "/p/b.sock", ["1.0.0"])).rejects.toThrow("forbidden");
    expect(empty.h.drivers().size).toBe(0);
  });
});
