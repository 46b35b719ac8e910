// The compiled bunlet as a node agent: with the runtime down it still serves and says so; on the
// private containerd it runs static pods, survives its own restart without restarting them, and
// scripts/demo.sh --once (the README's main command) shows a kernel-notified eviction with its trace.
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Pod } from "../../src/pod/types.ts";
import { ensureBuilt, freePort, killAll, pollUntil, ROOT, spawnBunlet, waitForHealthz, type BunletProcess } from "../support/binary.ts";
import { staticPodFlags } from "../support/agent.ts";
import { removeCgroupTree } from "../support/cgroup.ts";
import { staticPodYaml } from "../support/manifests.ts";
import {
  acquireContainerd,
  canRunContainerd,
  removeSandboxes,
  tearDownPods,
  testContainerdEnv,
  testRuntimeCriName,
  type TestContainerd,
} from "../support/containerd.ts";

const PID = process.pid;

beforeAll(async () => {
  await ensureBuilt();
}, 180_000);
afterAll(killAll);

describe("runtime unreachable", () => {
  let dir: string;
  afterEach(async () => {
    await killAll();
    rmSync(dir, { recursive: true, force: true });
  });

  test("servers and endpoints come up, the runtime is reported unreachable, SIGTERM still exits 0", async () => {
    dir = mkdtempSync(join(tmpdir(), `bunlet-e2e-nort-${PID}-`));
    const port = freePort();
    const p = spawnBunlet([
      `--root-dir=${join(dir, "root")}`,
      `--port=${port}`,
      "--healthz-port=0",
      "--read-only-port=0",
      `--container-runtime-endpoint=unix://${join(dir, "none.sock")}`,
    ]);
    await waitForHealthz(p, `http://127.0.0.1:${port}/healthz`);
    const pods = (await (await fetch(`http://127.0.0.1:${port}/pods`)).json()) as { items: unknown[] };
    expect(pods.items).toEqual([]);
    expect((await fetch(`http://127.0.0.1:${port}/configz`)).status).toBe(200);
    await pollUntil(() => p.stderr().includes("Container runtime is not reachable"), "runtime unreachable log line", 20_000, 50);
    expect(p.stderr()).toContain(`endpoint=unix://${join(dir, "none.sock")}`);
    expect(await p.stop("SIGTERM", 5000)).toBe(0);
  }, 40_000);
});

describe.skipIf(!canRunContainerd())("on containerd", () => {
  let ctd: TestContainerd;
  const base = `/tmp/bunlet-e2e-pods-${PID}`;
  const manifests = join(base, "manifests");
  const cgroupRoot = `/bunlet-e2e-${PID}`;
  const node = `e2e-${PID}`;
  let port = 0;
  let p: BunletProcess | undefined;

  const start = async () => {
    p = spawnBunlet([
      ...staticPodFlags({ rootDir: join(base, "root"), manifests, cgroupRoot, endpoint: ctd.endpoint, node, port }),
      "--file-check-frequency=1s",
    ]);
    await waitForHealthz(p, `http://127.0.0.1:${port}/healthz`);
  };
  const pod = async (name: string): Promise<Pod | undefined> =>
    ((await (await fetch(`http://127.0.0.1:${port}/pods`)).json()) as { items: Pod[] }).items.find((x) => x.metadata.name === `${name}-${node}`);

  beforeAll(async () => {
    ctd = await acquireContainerd();
    mkdirSync(manifests, { recursive: true });
    port = freePort();
  }, 600_000);

  afterAll(async () => {
    await p?.stop("SIGTERM", 5000);
    await tearDownPods(ctd, () => removeSandboxes(ctd.cri, node), cgroupRoot, base);
  }, 120_000);

  test("runs a static pod; a restarted bunlet adopts it; removing the manifest removes it", async () => {
    writeFileSync(
      join(manifests, "sleeper.yaml"),
      staticPodYaml("sleeper", {
        image: ctd.images.busybox,
        command: ["sh", "-c", "exec sleep 3600"],
        terminationGracePeriodSeconds: 1,
        container: "      resources: { requests: { memory: 8Mi } }\n",
      }),
    );
    await start();
    await pollUntil(async () => (await pod("sleeper"))?.status?.phase === "Running", "sleeper Running", 60_000, 100);
    const before = (await pod("sleeper"))!.status!.containerStatuses![0]!.containerID;
    const summary = (await (await fetch(`http://127.0.0.1:${port}/stats/summary`)).json()) as {
      pods: { podRef: { name: string }; memory?: { workingSetBytes?: number } }[];
    };
    await pollUntil(
      async () => {
        const s = (await (await fetch(`http://127.0.0.1:${port}/stats/summary`)).json()) as typeof summary;
        return (s.pods.find((x) => x.podRef.name === `sleeper-${node}`)?.memory?.workingSetBytes ?? 0) > 0;
      },
      "sleeper memory in /stats/summary",
      20_000,
      100,
    );
    expect(await p!.stop("SIGTERM", 5000)).toBe(0);
    // The kubelet's contract: stopping the agent leaves pods running.
    const running = await ctd.cri.listContainers({ state: { state: "CONTAINER_RUNNING" } });
    expect(running.some((c) => `${testRuntimeCriName}://${c.id}` === before)).toBe(true);
    await start();
    await pollUntil(async () => (await pod("sleeper"))?.status?.phase === "Running", "sleeper Running after restart", 60_000, 100);
    const after = (await pod("sleeper"))!.status!.containerStatuses![0]!;
    expect(after.containerID).toBe(before!);
    expect(after.restartCount).toBe(0);
    unlinkSync(join(manifests, "sleeper.yaml"));
    await pollUntil(
      async () => (await ctd.cri.listPodSandbox()).every((s) => s.metadata?.name !== `sleeper-${node}`),
      "sleeper removed from the runtime",
      60_000,
      200,
    );
    // One agent per runtime: a second bunlet on this containerd would treat this one's pods as
    // orphans and remove them, as two kubelets would.
    expect(await p!.stop("SIGTERM", 5000)).toBe(0);
    p = undefined;
  }, 180_000);

  test("scripts/demo.sh --once: pods run, the hog is evicted through the kernel notifier, trace printed, all cleaned up", async () => {
    const demoDir = mkdtempSync(join(tmpdir(), `bunlet-e2e-demo-${PID}-`));
    const demoCgroup = `/bunlet-demo-e2e-${PID}`;
    try {
      const proc = Bun.spawn(["bash", "scripts/demo.sh", "--once"], {
        cwd: ROOT,
        env: {
          ...process.env,
          ...testContainerdEnv,
          BUNLET_DEMO_DIR: demoDir,
          BUNLET_DEMO_CGROUP_ROOT: demoCgroup,
          BUNLET_DEMO_PORT: String(freePort()),
          BUNLET_DEMO_HEALTHZ_PORT: String(freePort()),
          BUNLET_DEMO_TIMEOUT: "90",
        },
        stdout: "pipe",
        stderr: "pipe",
      });
      const timer = setTimeout(() => proc.kill("SIGINT"), 170_000);
      const [code, out, err] = await Promise.all([proc.exited, new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
      clearTimeout(timer);
      if (code !== 0) console.error(out, err);
      expect(code).toBe(0);
      expect(out).toMatch(/default\/hog-\S+ +BestEffort +Running/);
      expect(out).toMatch(/"kind":"eviction","pod":"default\/hog-[^"]+"/);
      expect(out).toContain('"trigger":{"kind":"kernel"');
      expect(out).toMatch(/default\/hog-\S+ +BestEffort +Failed +Evicted/);
      expect(out).toMatch(/default\/steady-\S+ +Guaranteed +Running/);
      expect(out).toMatch(/default\/web-\S+ +Burstable +Running/);
      expect(out).toContain("The node was low on resource: memory.");
      // Cleaned up: no demo cgroups, no demo pods in the runtime.
      expect(existsSync(join("/sys/fs/cgroup/memory", demoCgroup))).toBe(false);
      const left = (await ctd.cri.listPodSandbox()).filter((s) => /^(hog|web|steady)-/.test(s.metadata?.name ?? ""));
      expect(left).toEqual([]);
    } finally {
      removeCgroupTree(demoCgroup);
      rmSync(demoDir, { recursive: true, force: true });
    }
  }, 180_000);
});
