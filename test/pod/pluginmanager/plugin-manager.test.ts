// The plugin manager over real unix sockets in a temporary directory: the watcher, the registration
// client and the CSI handler's NodeGetInfo against the test CSI driver (test/support/fake-csi-driver.ts);
// the node info manager is a recording fake (the API server side is the machine test's).
import { afterEach, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { realClock } from "../../../src/clock.ts";
import { createPluginManager, type PluginManager, pluginsRegistrationDir, PluginType } from "../../../src/pod/pluginmanager/index.ts";
import { createAction } from "../../../src/pod/pluginmanager/watcher.ts";
import { createCSIRegistrationHandler, nodeGetInfo, type NodeInfoManager } from "../../../src/pod/volumes/csi/index.ts";
import { createFakeCSIDriver, type FakeCSIDriver } from "../../support/fake-csi-driver.ts";
import { until } from "../../support/wait.ts";

const st = (dir: boolean, socket: boolean) => ({ isDirectory: () => dir, isSocket: () => socket });

describe("the plugin watcher's decisions", () => {
  test.each([
    ["/r/a.sock", "add-socket", st(false, true)],
    ["/r/.a.sock", "ignore-dot-file", st(false, true)],
    ["/r/sub", "traverse-dir", st(true, false)],
    ["/r/file", "ignore-non-socket", st(false, false)],
  ] as const)("%s → %s", (p, want, s) => {
    expect(createAction(p, s)).toBe(want);
  });
});

function recordingNim() {
  const calls: string[] = [];
  const nim: NodeInfoManager = {
    async installCSIDriver(name, nodeID, max, topology) {
      calls.push(`install ${name} ${nodeID} ${max} ${JSON.stringify(topology ?? {})}`);
    },
    async uninstallCSIDriver(name) {
      calls.push(`uninstall ${name}`);
    },
    async initializeCSINode() {},
  };
  return { calls, nim };
}

describe("the plugin manager with a CSI driver", () => {
  let root = "";
  let pm: PluginManager | undefined;
  const drivers: FakeCSIDriver[] = [];
  afterEach(async () => {
    await pm?.stop();
    for (const d of drivers.splice(0)) await d.stop();
    rmSync(root, { recursive: true, force: true });
  });

  function setup() {
    root = mkdtempSync(join(tmpdir(), "bunlet-pm-"));
    const rec = recordingNim();
    const csi = createCSIRegistrationHandler({ nim: rec.nim, nodeGetInfo, timeoutMs: 5_000 });
    pm = createPluginManager({ sockDir: pluginsRegistrationDir(root), clock: realClock, loopSleepMs: 50 });
    pm.addHandler(PluginType.CSIPlugin, csi);
    return { rec, csi };
  }
  function driver(name: string, opts: Partial<Parameters<typeof createFakeCSIDriver>[0]> = {}): FakeCSIDriver {
    const d = createFakeCSIDriver({
      name,
      registrationSocket: join(pluginsRegistrationDir(root), `${name}-reg.sock`),
      csiSocket: join(root, "plugins", name, "csi.sock"),
      nodeId: `${name}-node`,
      maxVolumesPerNode: 3,
      topology: { "topology.example.com/node": "n1" },
      ...opts,
    });
    drivers.push(d);
    return d;
  }

  test("a socket that appears registers the driver; its removal de-registers it; a new one registers again", async () => {
    const { rec, csi } = setup();
    pm!.start();
    const d = driver("a.csi.example.com");
    await d.start();
    await until("registered", () => d.statuses.length > 0 && rec.calls.length > 0);
    expect(d.statuses).toEqual([{ pluginRegistered: true, error: "" }]);
    expect(d.calls).toEqual(["NodeGetInfo"]);
    expect(rec.calls).toEqual(['install a.csi.example.com a.csi.example.com-node 3 {"topology.example.com/node":"n1"}']);
    expect([...csi.drivers().keys()]).toEqual(["a.csi.example.com"]);
    await d.stopRegistrar();
    await until("de-registered", () => rec.calls.length === 2);
    expect(rec.calls[1]).toBe("uninstall a.csi.example.com");
    expect(pm!.registeredPlugins()).toEqual([]);
    await d.startRegistrar();
    await until("registered again", () => d.statuses.length === 2);
    expect(d.statuses[1]).toEqual({ pluginRegistered: true, error: "" });
  });

  test("sockets already there are registered at start (a restart); dot-files, plain files and other types are not", async () => {
    const { rec } = setup();
    const d = driver("b.csi.example.com");
    await d.start();
    writeFileSync(join(pluginsRegistrationDir(root), "not-a-socket"), "");
    const other = driver("c.csi.example.com", { type: "SomethingElse" });
    await other.start();
    const hidden = net.createServer().listen(join(pluginsRegistrationDir(root), ".hidden.sock"));
    try {
      pm!.start();
      await until("registered", () => d.statuses.length > 0 && other.statuses.length > 0);
      expect(d.statuses).toEqual([{ pluginRegistered: true, error: "" }]);
      const sock = join(pluginsRegistrationDir(root), "c.csi.example.com-reg.sock");
      expect(other.statuses[0]).toEqual({
        pluginRegistered: false,
        error: `RegisterPlugin error -- no handler registered for plugin type: SomethingElse at socket ${sock}`,
      });
      expect(rec.calls).toEqual([expect.stringContaining("install b.csi.example.com")]);
      expect(pm!.registeredPlugins().map((p) => p.name)).toEqual(["b.csi.example.com"]);
    } finally {
      hidden.close();
    }
  });

  test("a driver without a v1 version is refused with upstream's text", async () => {
    setup();
    pm!.start();
    const d = driver("d.csi.example.com", { versions: ["0.3.0"] });
    await d.start();
    await until("refused", () => d.statuses.length > 0);
    const endpoint = join(root, "plugins", "d.csi.example.com", "csi.sock");
    expect(d.statuses[0]).toEqual({
      pluginRegistered: false,
      error: `RegisterPlugin error -- plugin validation failed with err: validation failed for CSI Driver d.csi.example.com at endpoint ${endpoint}: kubernetes.io/csi: ValidatePlugin for CSI driver "d.csi.example.com" failed. None of the versions specified ["0.3.0"] are supported. err=highest supported version reported is 0.3.0, must be v1.x`,
    });
    expect(d.calls).toEqual([]);
  });

  test("a socket in a subdirectory made later is found", async () => {
    const { rec } = setup();
    pm!.start();
    mkdirSync(join(pluginsRegistrationDir(root), "sub"));
    const d = driver("e.csi.example.com", { registrationSocket: join(pluginsRegistrationDir(root), "sub", "e-reg.sock") });
    await d.start();
    await until("registered", () => rec.calls.length > 0);
    expect(rec.calls[0]).toContain("install e.csi.example.com");
  });
});
