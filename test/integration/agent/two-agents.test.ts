// One runtime, one agent, on a real containerd: a second node agent (another root dir) on the runtime
// of a running one is refused at start with a clear error, and the first agent's pod is untouched —
// rather than the two killing each other's pods as orphans every few seconds. Skipped when not root.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ExitReason } from "../../../src/agent-run.ts";
import { createNodeAgent, type NodeAgent } from "../../../src/agent.ts";
import { loadConfig } from "../../../src/config/load.ts";
import { createKubeRuntime } from "../../../src/pod/kuberuntime/manager.ts";
import { OWNER_LABEL } from "../../../src/pod/kuberuntime/owner.ts";
import type { Pod } from "../../../src/pod/types.ts";
import { acquireContainerd, canRunContainerd, removeNodePods, tearDownPods, type TestContainerd } from "../../support/containerd.ts";
import { writeStaticPodConfig } from "../../support/agent.ts";
import { freePort } from "../../support/binary.ts";
import { staticPodYaml } from "../../support/manifests.ts";
import { until } from "../../support/wait.ts";

const PID = process.pid;
const CGROUP_ROOT = `/bunlet-owners-${PID}`;
const BASE = `/tmp/bunlet-owners-${PID}`;

describe.skipIf(!canRunContainerd())("two agents on one containerd", () => {
  let ctd: TestContainerd;
  const agents: NodeAgent[] = [];

  async function startAgent(name: string, manifests: string): Promise<NodeAgent> {
    mkdirSync(manifests, { recursive: true });
    const config = writeStaticPodConfig(join(BASE, `${name}.yaml`), {
      manifests,
      endpoint: ctd.endpoint,
      cgroupRoot: `${CGROUP_ROOT}-${name}`,
      podLogsDir: join(BASE, name, "logs"),
      port: freePort(),
    });
    const loaded = await loadConfig(["--config", config, `--hostname-override=${name}`, `--root-dir=${join(BASE, name, "root")}`]);
    const agent = createNodeAgent(loaded, { protectSelf: false, runtimeRetryMs: 200 });
    agents.push(agent);
    await agent.start();
    return agent;
  }

  afterAll(async () => {
    for (const a of agents) await a.stop();
    await tearDownPods(
      ctd,
      async () => {
        if (ctd) for (const n of ["owna", "ownb"]) await removeNodePods(createKubeRuntime({ cri: ctd.cri }), n);
      },
      `${CGROUP_ROOT}-owna`,
      BASE,
    );
  }, 120_000);

  test("the second agent stops with an error naming the first's root dir; the first's pod keeps running", async () => {
    ctd = await acquireContainerd();
    const manifests = join(BASE, "owna", "manifests");
    mkdirSync(manifests, { recursive: true });
    writeFileSync(
      join(manifests, "keep.yaml"),
      staticPodYaml("keep", { image: ctd.images.busybox, command: ["sh", "-c", "exec sleep 3600"], terminationGracePeriodSeconds: 1 }),
    );
    const a = await startAgent("owna", manifests);
    expect(await a.runtimeReady).toBe(true);
    const base = a.servers()!.get("main")!.url;
    const running = await until(
      "keep Running",
      async () => {
        const p = ((await (await fetch(`${base}/pods`)).json()) as { items: Pod[] }).items.find((x) => x.metadata.name === "keep-owna");
        return p?.status?.phase === "Running" && p.status.containerStatuses?.[0]?.state.running ? p : undefined;
      },
      120_000,
    );
    const containerId = running.status!.containerStatuses![0]!.containerID!.replace(/^[a-z-]+:\/\//, "");
    const [sandbox] = await ctd.cri.listPodSandbox({ labelSelector: { "io.kubernetes.pod.uid": running.metadata.uid! } });
    expect(sandbox!.labels[OWNER_LABEL]).toBe(join(BASE, "owna", "root"));

    const b = await startAgent("ownb", join(BASE, "ownb", "manifests"));
    const reason: ExitReason = await b.done;
    expect(reason.kind).toBe("fatal");
    expect((reason as { error: string }).error).toContain(
      `already runs 1 pod(s) of another bunlet (root dir ${join(BASE, "owna", "root")}; e.g. default/keep-owna); this one (root dir ${join(BASE, "ownb", "root")}) refuses to start`,
    );
    expect(await b.runtimeReady).toBe(false);
    await b.stop();

    // Untouched: same container, still running.
    const st = await ctd.cri.containerStatus(containerId);
    expect(st.status?.state).toBe("CONTAINER_RUNNING");
    await a.pods.lifecycle.housekeeping();
    expect((await ctd.cri.containerStatus(containerId)).status?.state).toBe("CONTAINER_RUNNING");
  }, 240_000);
});
