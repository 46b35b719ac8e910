// machine test: root and a private containerd (test/support/containerd.ts)
// Pod namespaces, names, /etc/hosts and DNS on a real containerd (private instance from test/support):
// static pod files → lifecycle → kuberuntime → containerd, asserting on the OCI spec containerd holds
// (namespaces) and on the files the containers see (/etc/hosts, /etc/resolv.conf, hostname).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, readlinkSync, writeFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { createPodCgroupManager } from "../../src/pod/cm/container-manager.ts";
import { createKubeRuntime } from "../../src/pod/kuberuntime/manager.ts";
import { createPodLifecycle } from "../../src/pod/lifecycle.ts";
import type { PodLifecycle } from "../../src/pod/lifecycle-types.ts";
import { managedHostsFileContent, parseResolvConf } from "../../src/pod/network/index.ts";
import type { Runtime } from "../../src/pod/runtime.ts";
import type { PodStatus } from "../../src/pod/types.ts";
import { acquireContainerd, canRunContainerd, removeNodePods, tearDownPods, type TestContainerd, testRuntimeCriName } from "../support/containerd.ts";
import { until } from "../support/wait.ts";

const PID = process.pid;
const CGROUP_ROOT = `/bunlet-net-${PID}`;
const BASE = `/tmp/bunlet-net-${PID}`;
const MANIFESTS = join(BASE, "manifests");
const NODE = "netnode";
const BUSYBOX = "bunlet.local/busybox:1";

type Obj = Record<string, unknown>;
const sleeper = (name: string, extra: Obj = {}) => ({ name, image: BUSYBOX, command: ["sh", "-c", "exec sleep 3600"], ...extra });
const writePod = (name: string, spec: Obj) =>
  writeFileSync(
    join(MANIFESTS, `${name}.json`),
    JSON.stringify({ apiVersion: "v1", kind: "Pod", metadata: { name }, spec: { terminationGracePeriodSeconds: 1, ...spec } }),
  );

describe.skipIf(!canRunContainerd())("pod namespaces, hosts and DNS on containerd", () => {
  let ctd: TestContainerd;
  let rt: Runtime;
  let lc: PodLifecycle;
  const status = (name: string): PodStatus | undefined => lc.listPodsForApi().find((p) => p.metadata.name === `${name}-${NODE}`)?.status;
  const running = (name: string, n = 1) =>
    until(`${name} running`, () => {
      const st = status(name);
      return st?.containerStatuses?.length === n && st.containerStatuses.every((c) => c.state.running) ? st : undefined;
    });
  const containerId = (st: PodStatus, c: string) => st.containerStatuses!.find((x) => x.name === c)!.containerID!.replace(`${testRuntimeCriName}://`, "");
  const namespaces = async (id: string): Promise<{ type: string; path?: string }[]> =>
    JSON.parse((await ctd.cri.containerStatus(id, true)).info.info!).runtimeSpec.linux.namespaces;
  const exec = async (id: string, cmd: string[]) => new TextDecoder().decode((await ctd.cri.execSync(id, cmd, 10)).stdout);

  beforeAll(async () => {
    ctd = await acquireContainerd();
    mkdirSync(MANIFESTS, { recursive: true });
    rt = createKubeRuntime({
      cri: ctd.cri,
      podLogsDir: join(BASE, "logs"),
      rootDir: join(BASE, "root"),
      dns: { clusterDNS: ["10.96.0.10"], clusterDomain: "cluster.local", resolvConf: "/etc/resolv.conf" },
    });
    lc = createPodLifecycle({
      runtime: rt,
      cgroups: createPodCgroupManager({ cgroupRoot: CGROUP_ROOT, podPidsLimit: 256 }),
      config: { nodeName: NODE, hostIP: "127.0.0.1", staticPodPath: MANIFESTS, fileCheckFrequencyMs: 20_000, syncFrequencyMs: 60_000, errorRetryMs: 1_000 },
    });
    await lc.start();
  }, 600_000);

  afterAll(async () => {
    await lc?.stop();
    await tearDownPods(ctd, () => removeNodePods(rt, NODE), CGROUP_ROOT, BASE);
  }, 120_000);

  test("hostPID and hostIPC: the node's PID and IPC namespaces; the host's processes are visible", async () => {
    writePod("hostns", { hostNetwork: true, hostPID: true, hostIPC: true, containers: [sleeper("app")] });
    const id = containerId(await running("hostns"), "app");
    // containerd joins the sandbox's namespaces by path, the sandbox of a host* pod running in the node's;
    // CRI-O leaves a host namespace out of the spec, so the container stays in the runtime's, the node's.
    const ns = await namespaces(id);
    const target = (type: string, self: string) => {
      const n = ns.find((x) => x.type === type);
      // By inode: CRI-O's paths are bind mounts of the namespace (pinns), no /proc symlinks.
      return n === undefined || statSync(n.path!).ino === statSync(`/proc/self/ns/${self}`).ino;
    };
    expect([target("pid", "pid"), target("ipc", "ipc"), target("network", "net")]).toEqual([true, true, true]);
    expect(await exec(id, ["sh", "-c", `test -d /proc/${process.pid} && echo seen`])).toBe("seen\n");
  }, 120_000);

  test("shareProcessNamespace: containers join the sandbox's PID namespace and see each other", async () => {
    writePod("shared", { shareProcessNamespace: true, containers: [sleeper("a"), sleeper("b", { command: ["sh", "-c", "exec sleep 3601"] })] });
    const st = await running("shared", 2);
    const [a, b] = [containerId(st, "a"), containerId(st, "b")];
    const pidA = (await namespaces(a)).find((n) => n.type === "pid");
    const pidB = (await namespaces(b)).find((n) => n.type === "pid");
    expect(pidA?.path).toMatch(/^\/proc\/\d+\/ns\/pid$/);
    expect(pidB?.path).toBe(pidA!.path!);
    expect(readlinkSync(pidA!.path!)).not.toBe(readlinkSync("/proc/self/ns/pid"));
    expect(await exec(a, ["ps", "-o", "args"])).toContain("sleep 3601");
  }, 120_000);

  test("hostname, subdomain and hostAliases → the managed /etc/hosts; ClusterFirst → clusterDNS in resolv.conf", async () => {
    writePod("named", {
      hostname: "h0",
      subdomain: "sub",
      hostAliases: [{ ip: "10.1.2.3", hostnames: ["db.local", "db"] }],
      containers: [sleeper("app")],
    });
    const id = containerId(await running("named"), "app");
    const podIP = (await exec(id, ["sh", "-c", "ip -4 -o addr show eth0 | awk '{print $4}' | cut -d/ -f1"])).trim();
    expect(podIP).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    expect(await exec(id, ["cat", "/etc/hosts"])).toBe(
      managedHostsFileContent([podIP], "h0", "sub.default.svc.cluster.local", [{ ip: "10.1.2.3", hostnames: ["db.local", "db"] }]),
    );
    expect((await exec(id, ["hostname"])).trim()).toBe("h0");
    const resolv = parseResolvConf(await exec(id, ["cat", "/etc/resolv.conf"]));
    const host = parseResolvConf(readFileSync("/etc/resolv.conf", "utf8"));
    expect(resolv).toEqual({
      servers: ["10.96.0.10"],
      searches: [...new Set(["default.svc.cluster.local", "svc.cluster.local", "cluster.local", ...host.searches])],
      options: ["ndots:5"],
      errors: [],
    });
  }, 120_000);

  test("dnsPolicy None with dnsConfig → exactly that resolv.conf", async () => {
    writePod("nodns", {
      dnsPolicy: "None",
      dnsConfig: { nameservers: ["192.0.2.53"], searches: ["example.test"], options: [{ name: "ndots", value: "1" }, { name: "edns0" }] },
      containers: [sleeper("app")],
    });
    const id = containerId(await running("nodns"), "app");
    expect(parseResolvConf(await exec(id, ["cat", "/etc/resolv.conf"]))).toEqual({
      servers: ["192.0.2.53"],
      searches: ["example.test"],
      options: ["ndots:1", "edns0"],
      errors: [],
    });
  }, 120_000);

  test("hostNetwork: the node's /etc/hosts behind the managed header, with hostAliases; ClusterFirst falls back to the node's resolv.conf", async () => {
    writePod("hostnet", { hostNetwork: true, hostAliases: [{ ip: "10.9.9.9", hostnames: ["extra"] }], containers: [sleeper("app")] });
    const id = containerId(await running("hostnet"), "app");
    expect(await exec(id, ["cat", "/etc/hosts"])).toBe(
      `# Kubernetes-managed hosts file (host network).\n${readFileSync("/etc/hosts", "utf8")}\n# Entries added by HostAliases.\n10.9.9.9\textra\n`,
    );
    const host = parseResolvConf(readFileSync("/etc/resolv.conf", "utf8"));
    expect(parseResolvConf(await exec(id, ["cat", "/etc/resolv.conf"])).servers).toEqual(host.servers);
  }, 120_000);
});
