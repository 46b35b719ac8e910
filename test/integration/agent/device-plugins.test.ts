// Device plugins against a real control plane (test/support/upstream): upstream's sample-device-plugin
// (test/images/sample-device-plugin, two devices of example.com/resource) registers with bunlet; the
// Node shows the resource, a pod asking for one runs with the device file the plugin's Allocate mounts,
// a pod asking for one more than the node has is refused with upstream's reason, podresources reports
// the device, and after a bunlet restart (the plugin registers again when kubelet.sock reappears) the
// pod keeps its device. Needs root, containerd and the upstream binaries.
//
// The sample plugin registers on the fixed /var/lib/kubelet/device-plugins/kubelet.sock, so it runs in a
// mount namespace of its own where that path is bunlet's <rootDir>/device-plugins (a bind mount on a
// tmpfs /var/lib: nothing on the host changes).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { createUnixGrpcTransport } from "../../../src/cri/grpc.ts";
import { loadPodResourcesProto } from "../../../src/podresources/server.ts";
import { canRunContainerd } from "../../support/containerd.ts";
import { appPod, startUpstreamCluster, upstreamBinDir, type UpstreamCluster } from "../../support/upstream/index.ts";
import { until } from "../../support/wait.ts";

const R = "example.com/resource";
const bin = upstreamBinDir("kube-apiserver kube-controller-manager kube-scheduler kubectl sample-device-plugin");
if (!bin.dir) console.warn(`skipping the device plugin tests: ${bin.why}`);

/** The device files the sample plugin makes on the host (/tmp/<device id>), removed afterwards. */
const DEVICE_FILES = ["/tmp/Dev-1", "/tmp/Dev-2"];

describe.skipIf(!canRunContainerd() || !bin.dir)("device plugins", () => {
  let c: UpstreamCluster;
  let plugin: ReturnType<typeof Bun.spawn> | undefined;
  let pluginLog = "";
  const apply = (doc: object) => c.cp.kubectlIn(JSON.stringify(doc), "apply", "-f", "-");
  const node = () => c.json("get", "node", "localhost");
  const preexisting = DEVICE_FILES.filter((f) => existsSync(f));

  /** The devices podresources List reports for a pod's container. */
  async function listedDevices(pod: string): Promise<{ resourceName: string; deviceIds: string[] }[]> {
    const proto = loadPodResourcesProto();
    const client = createUnixGrpcTransport(join(c.n.rootDir, "pod-resources", "kubelet.sock"));
    try {
      const reply = await client.unary("/v1.PodResourcesLister/List", proto.encode("ListPodResourcesRequest", {}), 10_000);
      const r = proto.decode<{ podResources: { name: string; containers: { devices: { resourceName: string; deviceIds: string[] }[] }[] }[] }>(
        "ListPodResourcesResponse",
        reply,
      );
      return r.podResources.find((p) => p.name === pod)?.containers[0]?.devices ?? [];
    } finally {
      client.close();
    }
  }

  function startPlugin(): void {
    const dir = join(c.n.rootDir, "device-plugins");
    const script =
      'mount -t tmpfs tmpfs /var/lib && mkdir -p /var/lib/kubelet/device-plugins && mount --bind "$0" /var/lib/kubelet/device-plugins && exec "$1"';
    plugin = Bun.spawn(["unshare", "--mount", "--propagation", "private", "sh", "-c", script, dir, join(bin.dir!, "sample-device-plugin")], {
      stdout: "pipe",
      stderr: "pipe",
    });
    void new Response(plugin.stderr as ReadableStream).text().then((t) => (pluginLog += t));
  }

  beforeAll(async () => {
    c = await startUpstreamCluster({ name: "devices", binDir: bin.dir!, config: ["nodeStatusUpdateFrequency: 2s"] });
    startPlugin();
  }, 240_000);
  afterAll(async () => {
    if (plugin) {
      plugin.kill("SIGTERM");
      await plugin.exited;
    }
    await c?.stop();
    for (const f of DEVICE_FILES) if (!preexisting.includes(f)) rmSync(f, { force: true });
  }, 120_000);

  test("the Node shows the plugin's two devices", async () => {
    const n = await until(
      `${R} on the Node`,
      async () => {
        const o = await node();
        return o.status.capacity[R] === "2" ? o : undefined;
      },
      60_000,
      { intervalMs: 500 },
    ).catch((e) => {
      throw new Error(`${(e as Error).message}\nplugin log:\n${pluginLog}`);
    });
    expect(n.status.allocatable[R]).toBe("2");
  }, 90_000);

  test("a pod asking for one device runs with the device file the plugin mounts; podresources lists it", async () => {
    await apply(appPod("dev-one", c.n.ctd.images.busybox, { command: ["sh", "-c", "ls /tmp; exec sleep 3600"], resources: { limits: { [R]: "1" } } }));
    await c.podInPhase("dev-one", "Running", 120_000);
    const devices = await listedDevices("dev-one");
    expect(devices).toHaveLength(1);
    expect(devices[0]?.resourceName).toBe(R);
    const id = devices[0]!.deviceIds[0]!;
    expect(["Dev-1", "Dev-2"]).toContain(id);
    const logs = await until("the container's listing of /tmp", async () => (await c.cp.kubectl("logs", "dev-one")).trim() || undefined, 30_000);
    expect(logs.split("\n")).toContain(id);
  }, 180_000);

  test("a pod asking for one more device than the node has is refused with UnexpectedAdmissionError", async () => {
    await apply(appPod("dev-three", c.n.ctd.images.busybox, { resources: { limits: { [R]: "3" } } }));
    const p = await c.podInPhase("dev-three", "Failed", 60_000);
    expect(p.status.reason).toBe("UnexpectedAdmissionError");
    expect(p.status.message).toBe(
      "Allocate failed due to requested number of devices unavailable for example.com/resource. Requested: 3, Available: 1, which is unexpected",
    );
  }, 90_000);

  test("after a bunlet restart the plugin registers again and the pod keeps its device", async () => {
    const before = await listedDevices("dev-one");
    const running = await c.json("get", "pod", "dev-one");
    await c.n.restart();
    // The restarted bunlet's own log: the plugin saw kubelet.sock made anew and registered again.
    const logged = (t: string) => c.n.proc.stderr().includes(t) || c.n.proc.stdout().includes(t);
    await until("the plugin registered again", () => logged("Device plugin connected"), 120_000, { intervalMs: 500 });
    await until("its devices listed", () => logged("Processed device updates for resource"), 30_000, { intervalMs: 200 });
    const listed = await until("podresources after the restart", () => listedDevices("dev-one").catch(() => undefined), 30_000, { intervalMs: 500 });
    expect(listed).toEqual(before);
    await until("the Node's allocatable back to 2", async () => (await node()).status.allocatable[R] === "2", 30_000, { intervalMs: 500 });
    const after = await c.json("get", "pod", "dev-one");
    expect(after.status.phase).toBe("Running");
    expect(after.status.containerStatuses[0].restartCount).toBe(running.status.containerStatuses[0].restartCount);
    expect(after.status.containerStatuses[0].containerID).toBe(running.status.containerStatuses[0].containerID);
  }, 180_000);
});
