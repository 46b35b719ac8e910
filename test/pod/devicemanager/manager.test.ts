// The device manager end to end on temp unix sockets: a plugin registers on kubelet.sock, its devices
// stream in, pods are admitted and allocated, the checkpoint brings the assignments back after a restart.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createUnixGrpcTransport } from "../../../src/cri/grpc.ts";
import { createManualClock } from "../../../src/manual-clock.ts";
import { devicePluginCodec } from "../../../src/pod/devicemanager/endpoint.ts";
import { createDeviceManager, devicePluginsDir, type DeviceManager } from "../../../src/pod/devicemanager/index.ts";
import { unmarshalCheckpoint } from "../../../src/pod/devicemanager/checkpoint.ts";
import type { PodLike } from "../../../src/pod/pod-like.ts";
import { createFakeDevicePlugin, type FakeDevicePlugin } from "../../support/fake-device-plugin.ts";

const R = "example.com/resource";
const pod = (uid: string, n: number): PodLike => ({
  metadata: { name: uid, namespace: "default", uid },
  spec: { containers: [{ name: "app", resources: { limits: { [R]: String(n) } } }] },
});
const healthy = (...ids: string[]) => ids.map((ID) => ({ ID, health: "Healthy" }));

/** Checked at each capacity change the manager reports (a device list, a stream's end). */
const waiters = new Set<() => void>();
function until(what: string, ok: () => boolean, ms = 5000): Promise<void> {
  if (ok()) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      waiters.delete(check);
      reject(new Error(`timed out waiting for ${what}`));
    }, ms);
    const check = () => {
      if (!ok()) return;
      clearTimeout(timer);
      waiters.delete(check);
      resolve();
    };
    waiters.add(check);
  });
}

describe("device manager", () => {
  let root: string;
  let plugin: FakeDevicePlugin;
  let managers: DeviceManager[];
  let active: PodLike[];
  const clock = createManualClock(1_000_000);
  let changes = 0;

  const newManager = async () => {
    const m = createDeviceManager({
      rootDir: root,
      clock,
      activePods: () => active,
      sourcesReady: () => true,
      onCapacityChange: () => {
        changes++;
        for (const w of [...waiters]) w();
      },
    });
    managers.push(m);
    await m.start();
    return m;
  };
  const register = async (endpoint = "fake.sock", resourceName = R, version = "v1beta1") => {
    const codec = devicePluginCodec();
    const t = createUnixGrpcTransport(path.join(devicePluginsDir(root), "kubelet.sock"));
    try {
      await t.unary("/v1beta1.Registration/Register", codec.encode("RegisterRequest", { version, endpoint, resourceName }), 5000);
    } finally {
      t.close();
    }
  };

  beforeEach(async () => {
    root = mkdtempSync(path.join(tmpdir(), "devmgr-"));
    managers = [];
    active = [];
    changes = 0;
  });
  afterEach(async () => {
    for (const m of managers) await m.stop();
    await plugin?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  const startPlugin = async (o: { preferred?: boolean } = {}) => {
    plugin = createFakeDevicePlugin(path.join(devicePluginsDir(root), "fake.sock"), { devices: healthy("Dev-1", "Dev-2"), ...o });
    await plugin.start();
  };

  test("registration: the node's capacity and allocatable follow the plugin's devices and health", async () => {
    const m = await newManager();
    await startPlugin();
    await register();
    await until("the device list", () => m.capacity().capacity[R] === "2");
    expect(m.capacity()).toEqual({ capacity: { [R]: "2" }, allocatable: { [R]: "2" }, removed: [] });
    expect(changes).toBeGreaterThan(0);
    plugin.setDevices([...healthy("Dev-1"), { ID: "Dev-2", health: "Unhealthy" }]);
    await until("the health change", () => m.capacity().allocatable[R] === "1");
    expect(m.capacity().capacity[R]).toBe("2");
    expect(m.allocatableDevices()).toEqual([{ resourceName: R, deviceIds: ["Dev-1"] }]);
  });

  test("registration is refused for another version or a native resource name, with upstream's text", async () => {
    await newManager();
    await expect(register("fake.sock", R, "v1alpha1")).rejects.toThrow(
      'requested API version "v1alpha1" is not supported by kubelet. Supported version is ["v1beta1"]',
    );
    await expect(register("fake.sock", "cpu")).rejects.toThrow('the ResourceName "cpu" is invalid');
  });

  test("admission allocates through the plugin (preferred, then Allocate); one too many is refused", async () => {
    const m = await newManager();
    await startPlugin({ preferred: true });
    await register();
    await until("the device list", () => m.capacity().allocatable[R] === "2");
    const a = pod("uid-a", 1);
    const r = m.admitHandler(a, []);
    expect(r.admit).toBe(true);
    await r.waitFor;
    active.push(a);
    // The plugin prefers the last available device.
    expect(plugin.calls.some((c) => c.startsWith("GetPreferredAllocation"))).toBe(true);
    const opts = await m.runContainerOptions(a, a.spec.containers[0]!);
    expect(opts?.envs).toEqual([{ key: "DEVICES", value: "Dev-2" }]);
    expect(opts?.mounts).toEqual([{ containerPath: "/tmp/Dev-2", hostPath: "/tmp/Dev-2", readonly: false }]);
    expect(m.containerDevices("uid-a", "app")).toEqual([{ resourceName: R, deviceIds: ["Dev-2"] }]);

    expect(m.admitHandler(pod("uid-b", 2), [a])).toEqual({
      admit: false,
      reason: "UnexpectedAdmissionError",
      message: "Allocate failed due to requested number of devices unavailable for example.com/resource. Requested: 2, Available: 1, which is unexpected",
    });
    // A terminated pod's devices are free again.
    active = [];
    const c = m.admitHandler(pod("uid-c", 2), []);
    expect(c.admit).toBe(true);
    await c.waitFor;
  });

  test("an init container's device is reused by the container after it", async () => {
    const m = await newManager();
    await startPlugin();
    await register();
    await until("the device list", () => m.capacity().allocatable[R] === "2");
    const p: PodLike = {
      metadata: { name: "init", namespace: "default", uid: "uid-i" },
      spec: {
        initContainers: [{ name: "setup", resources: { limits: { [R]: "1" } } }],
        containers: [{ name: "app", resources: { limits: { [R]: "1" } } }],
      },
    };
    await m.admitHandler(p, []).waitFor;
    active.push(p);
    expect(m.containerDevices("uid-i", "setup")).toEqual(m.containerDevices("uid-i", "app"));
    // One device left for another pod.
    const x = m.admitHandler(pod("uid-x", 1), [p]);
    expect(x.admit).toBe(true);
    await x.waitFor;
    expect(m.containerDevices("uid-x", "app")).not.toEqual(m.containerDevices("uid-i", "app"));
  });

  test("the checkpoint keeps the assignments over a restart; capacity is 0 until the plugin registers again", async () => {
    const m = await newManager();
    await startPlugin();
    await register();
    await until("the device list", () => m.capacity().allocatable[R] === "2");
    const a = pod("uid-a", 1);
    await m.admitHandler(a, []).waitFor;
    active.push(a);
    const file = path.join(devicePluginsDir(root), "kubelet_internal_checkpoint");
    const cp = unmarshalCheckpoint(readFileSync(file, "utf8"));
    expect(cp.entries.map((e) => [e.podUID, e.containerName, e.resourceName, [...e.deviceIds]])).toEqual([["uid-a", "app", R, [[-1, ["Dev-1"]]]]]);
    expect(cp.registeredDevices[R]?.sort()).toEqual(["Dev-1", "Dev-2"]);

    await m.stop();
    managers = [];
    const again = await newManager(); // the old sockets are gone, the checkpoint stays
    expect(existsSync(plugin.socketPath)).toBe(false);
    expect(again.containerDevices("uid-a", "app")).toEqual([{ resourceName: R, deviceIds: ["Dev-1"] }]);
    expect(again.capacity()).toEqual({ capacity: { [R]: "0" }, allocatable: { [R]: "0" }, removed: [] });
    // Admitted again before its plugin is back, the pod keeps its devices without asking the plugin.
    expect(again.admitHandler(a, [])).toEqual({ admit: true });
    // The container keeps its devices: its run options come from the checkpoint's answer.
    expect((await again.runContainerOptions(a, a.spec.containers[0]!))?.envs).toEqual([{ key: "DEVICES", value: "Dev-1" }]);
  });

  test("a plugin that goes away: capacity kept, allocatable 0; removed after the grace period", async () => {
    const m = await newManager();
    await startPlugin();
    await register();
    await until("the device list", () => m.capacity().allocatable[R] === "2");
    await plugin.stop();
    await until("the stream's end", () => m.capacity().allocatable[R] === "0");
    expect(m.capacity().capacity[R]).toBe("2");
    clock.advance(5 * 60_000 + 1);
    expect(m.capacity()).toEqual({ capacity: {}, allocatable: {}, removed: [R] });
  });
});
