// containerd coming up after bunlet: the agent serves meanwhile, keeps retrying, and starts the static
// pods once the runtime answers. The runtime "appears" through a unix-socket proxy to the private
// containerd that starts listening only later. Skipped when not root.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { createConnection, createServer, type Server } from "node:net";
import { join } from "node:path";
import { createNodeAgent, type NodeAgent } from "../../../src/agent.ts";
import { loadConfig } from "../../../src/config/load.ts";
import type { Pod } from "../../../src/pod/types.ts";
import { acquireContainerd, canRunContainerd, removeSandboxes, tearDownPods, type TestContainerd } from "../../support/containerd.ts";
import { staticPodFlags } from "../../support/agent.ts";
import { freePort } from "../../support/binary.ts";
import { staticPodYaml } from "../../support/manifests.ts";
import { until } from "../../support/wait.ts";

const PID = process.pid;
const BASE = `/tmp/bunlet-late-${PID}`;
const CGROUP_ROOT = `/bunlet-late-${PID}`;
const NODE = "latetest";
const PROXY = join(BASE, "cri.sock");

describe.skipIf(!canRunContainerd())("runtime that comes up after bunlet", () => {
  let ctd: TestContainerd;
  let agent: NodeAgent | undefined;
  let proxy: Server | undefined;
  let port = 0;

  beforeAll(async () => {
    ctd = await acquireContainerd();
    mkdirSync(join(BASE, "manifests"), { recursive: true });
    writeFileSync(
      join(BASE, "manifests", "early.yaml"),
      staticPodYaml("early", { image: ctd.images.busybox, command: ["sh", "-c", "exec sleep 3600"], terminationGracePeriodSeconds: 1 }),
    );
    port = freePort();
  }, 600_000);

  afterAll(async () => {
    await agent?.stop();
    proxy?.close();
    await tearDownPods(ctd, () => removeSandboxes(ctd.cri, NODE), CGROUP_ROOT, BASE);
  }, 120_000);

  test("serves while the runtime is down, then runs the static pod once it answers", async () => {
    const loaded = await loadConfig([
      ...staticPodFlags({
        rootDir: join(BASE, "root"),
        manifests: join(BASE, "manifests"),
        cgroupRoot: CGROUP_ROOT,
        endpoint: `unix://${PROXY}`,
        node: NODE,
        port,
      }),
    ]);
    agent = createNodeAgent(loaded, { protectSelf: false, runtimeRetryMs: 200 });
    await agent.start();
    let ready: boolean | undefined;
    void agent.runtimeReady.then((r) => (ready = r));
    const pods = async () => ((await (await fetch(`http://127.0.0.1:${port}/pods`)).json()) as { items: Pod[] }).items;
    expect(await pods()).toEqual([]);
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    await Bun.sleep(1500); // a few failed attempts
    expect(ready).toBeUndefined();

    proxy = createServer((c) => {
      const up = createConnection(ctd.socket);
      c.pipe(up).pipe(c);
      c.on("error", () => up.destroy());
      up.on("error", () => c.destroy());
    });
    await new Promise<void>((r) => proxy!.listen(PROXY, r));
    expect(await until("runtime ready", () => ready, 30_000)).toBe(true);
    const p = await until("early Running", async () => (await pods()).find((x) => x.metadata.name === `early-${NODE}` && x.status?.phase === "Running"));
    expect(p.status!.containerStatuses![0]!.state.running).toBeDefined();
  }, 120_000);
});
