// The CRI client against a real private containerd (scripts/host/containerd.sh), or CRI-O (crio.sh,
// BUNLET_TEST_RUNTIME=crio), with the offline images.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { GrpcError, type PodSandboxConfig } from "../../../src/cri/client.ts";
import { type TestContainerd, acquireContainerd, canRunContainerd, testRuntimeCriName, testRuntimeScript } from "../../support/containerd.ts";
import { removeCgroupTree } from "../../support/cgroup.ts";
import { until as waitUntil, type Polled } from "../../support/wait.ts";

const LOG_ROOT = `/tmp/bunlet-cri-test-${process.pid}`;
const CGROUP_ROOT = `bunlet-cri-${process.pid}`;

/** Polls every 50 ms until a value, 20 s by default. */
const until = <T>(what: string, fn: () => Polled<T> | Promise<Polled<T>>, timeoutMs = 20_000) => waitUntil(what, fn, timeoutMs, { intervalMs: 50 });

describe.skipIf(!canRunContainerd())("CRI client on containerd", () => {
  let ctd: TestContainerd;
  const sandboxes: string[] = [];

  beforeAll(async () => {
    ctd = await acquireContainerd();
  }, 600_000);

  afterAll(async () => {
    for (const id of sandboxes) {
      await ctd?.cri.stopPodSandbox(id).catch(() => {});
      await ctd?.cri.removePodSandbox(id).catch(() => {});
    }
    await ctd?.release();
    removeCgroupTree(CGROUP_ROOT);
    rmSync(LOG_ROOT, { recursive: true, force: true });
  }, 120_000);

  const sandboxConfig = (name: string, hostNetwork = true): PodSandboxConfig => ({
    metadata: { name, namespace: "cri-test", uid: `${name}-${process.pid}`, attempt: 0 },
    hostname: hostNetwork ? "" : name,
    logDirectory: `${LOG_ROOT}/${name}`,
    labels: { "bunlet.test": String(process.pid) },
    linux: {
      // A cgroup parent of the test's own, as the kubelet always gives one (CRI-O's default is /crio).
      cgroupParent: `/${CGROUP_ROOT}/pod${name}`,
      securityContext: { namespaceOptions: { network: hostNetwork ? "NODE" : "POD", pid: "CONTAINER", ipc: "POD" } },
    },
  });

  async function runSandbox(name: string, hostNetwork = true) {
    const config = sandboxConfig(name, hostNetwork);
    const id = await ctd.cri.runPodSandbox(config);
    sandboxes.push(id);
    return { id, config };
  }

  /**
   * The container's log directory under the sandbox's, made before CreateContainer as the kubelet makes
   * it (upstream generateContainerConfig: MkdirAll of BuildContainerLogsDirectory). containerd makes a
   * missing one itself; CRI-O's conmon opens the log file as given and exits 1 when its directory is not there.
   */
  function makeContainerLogDir(config: PodSandboxConfig, containerName: string): void {
    mkdirSync(`${config.logDirectory}/${containerName}`, { recursive: true });
  }

  test("Version and Status name the runtime and report ready", async () => {
    const v = await ctd.cri.version();
    expect(v.runtimeName).toBe(testRuntimeCriName);
    expect(v.runtimeApiVersion).toBe("v1");
    const st = await ctd.cri.status();
    const ready = st.status?.conditions.find((c) => c.type === "RuntimeReady");
    expect(ready?.status).toBe(true);
  }, 60_000);

  test("the offline images are listed and resolvable", async () => {
    const tags = (await ctd.cri.listImages()).flatMap((i) => i.repoTags);
    expect(tags).toEqual(expect.arrayContaining([ctd.images.busybox, ctd.images.pause, ctd.images.memhog]));
    const img = await ctd.cri.imageStatus(ctd.images.busybox);
    // containerd names an image by its config digest, CRI-O by the bare hex of it (as `crictl images` shows).
    expect(img?.id).toMatch(/^(sha256:)?[0-9a-f]{64}$/);
    expect(await ctd.cri.imageStatus("bunlet.local/absent:1")).toBeNull();
    const fs = await ctd.cri.imageFsInfo();
    expect(fs.imageFilesystems[0]?.fsId?.mountpoint).toStartWith(ctd.root);
  }, 60_000);

  test("a busybox container echoes, exits 0, and its log file holds the output", async () => {
    const { id, config } = await runSandbox("echo");
    const word = `hello-${process.pid}`;
    makeContainerLogDir(config, "echo");
    const cid = await ctd.cri.createContainer(
      id,
      {
        metadata: { name: "echo", attempt: 0 },
        image: { image: ctd.images.busybox, userSpecifiedImage: ctd.images.busybox },
        // The sandbox's namespace modes, as the kubelet passes them (CRI-O refuses a pod PID namespace the sandbox lacks).
        linux: { securityContext: { namespaceOptions: config.linux?.securityContext?.namespaceOptions } },
        command: ["echo", word],
        logPath: "echo/0.log",
      },
      config,
    );
    await ctd.cri.startContainer(cid);
    const st = await until("echo to exit", async () => {
      const s = (await ctd.cri.containerStatus(cid)).status;
      return s?.state === "CONTAINER_EXITED" ? s : undefined;
    });
    expect(st.exitCode).toBe(0);
    expect(st.reason).toBe("Completed");
    expect(st.logPath).toBe(`${LOG_ROOT}/echo/echo/0.log`);
    // CRI log format: "<RFC3339Nano> stdout F <line>"
    expect(readFileSync(st.logPath, "utf8")).toMatch(new RegExp(`^\\S+ stdout F ${word}$`, "m"));
  }, 60_000);

  test("ContainerStats, ExecSync, stop and remove on a running container", async () => {
    const { id, config } = await runSandbox("busy");
    makeContainerLogDir(config, "sleeper");
    const cid = await ctd.cri.createContainer(
      id,
      {
        metadata: { name: "sleeper", attempt: 0 },
        image: { image: ctd.images.busybox, userSpecifiedImage: ctd.images.busybox },
        // The sandbox's namespace modes, as the kubelet passes them (CRI-O refuses a pod PID namespace the sandbox lacks).
        linux: { securityContext: { namespaceOptions: config.linux?.securityContext?.namespaceOptions } },
        command: ["sleep", "3600"],
        logPath: "sleeper/0.log",
      },
      config,
    );
    await ctd.cri.startContainer(cid);
    const stats = await ctd.cri.containerStats(cid);
    expect(stats?.attributes?.id).toBe(cid);
    expect(stats?.memory?.workingSetBytes?.value).toBeGreaterThan(0);
    const listed = await ctd.cri.listContainerStats({ podSandboxId: id });
    expect(listed.map((s) => s.attributes?.id)).toContain(cid);

    const ex = await ctd.cri.execSync(cid, ["sh", "-c", "echo out; echo err >&2; exit 3"], 10);
    expect(new TextDecoder().decode(ex.stdout)).toBe("out\n");
    expect(new TextDecoder().decode(ex.stderr)).toBe("err\n");
    expect(ex.exitCode).toBe(3);

    await ctd.cri.stopContainer(cid, 0);
    const st = (await ctd.cri.containerStatus(cid)).status;
    expect(st?.state).toBe("CONTAINER_EXITED");
    await ctd.cri.removeContainer(cid);
    expect(await ctd.cri.listContainers({ podSandboxId: id })).toEqual([]);

    await ctd.cri.stopPodSandbox(id);
    expect((await ctd.cri.podSandboxStatus(id)).status?.state).toBe("SANDBOX_NOTREADY");
    await ctd.cri.removePodSandbox(id);
    expect((await ctd.cri.listPodSandbox({ id })).length).toBe(0);
  }, 60_000);

  test("a pod-network sandbox gets an address from the bridge CNI config", async () => {
    const { id } = await runSandbox("podnet", false);
    const st = (await ctd.cri.podSandboxStatus(id)).status;
    expect(st?.state).toBe("SANDBOX_READY");
    expect(st?.network?.ip).toMatch(/^10\.89\.\d+\.\d+$/);
  }, 60_000);

  test("errors carry the gRPC code and the runtime's message", async () => {
    const err = await ctd.cri.containerStatus("0123456789abcdef-no-such-container").catch((e) => e);
    expect(err).toBeInstanceOf(GrpcError);
    expect((err as GrpcError).code).toBeGreaterThan(0);
    expect((err as GrpcError).message).toContain("ContainerStatus");
  }, 60_000);

  test("calls retry UNAVAILABLE while the runtime restarts", async () => {
    const { spawnSync } = await import("node:child_process");
    const { testContainerdEnv } = await import("../../support/containerd.ts");
    const script = testRuntimeScript;
    expect(spawnSync("bash", [script, "stop"], { env: testContainerdEnv }).status).toBe(0);
    expect(existsSync(ctd.socket)).toBe(false);
    // Start it again shortly after the call begins failing; the call must succeed once it is back.
    const pending = ctd.cri.version();
    const starter = Bun.spawn(["bash", script, "start"], { env: testContainerdEnv, stdout: "ignore", stderr: "ignore" });
    const v = await pending;
    expect(v.runtimeName).toBe(testRuntimeCriName);
    expect(await starter.exited).toBe(0);
  }, 60_000);
});
