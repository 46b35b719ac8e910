// machine test: root and a private containerd (test/support/containerd.ts)
// Periodic container GC on a real containerd: a crash-looping pod keeps one dead container per
// container name; once the pod is gone its containers, sandboxes and log directory go too.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { createKubeRuntime } from "../../../src/pod/kuberuntime/manager.ts";
import { decodePod } from "../../../src/pod/manifest.ts";
import type { BackOff, Runtime } from "../../../src/pod/runtime.ts";
import { acquireContainerd, canRunContainerd, removeNodePods, tearDownPods, type TestContainerd } from "../../support/containerd.ts";
import { until } from "../../support/wait.ts";

const PID = process.pid;
const BASE = `/tmp/bunlet-cgc-${PID}`;
const NODE = "gcnode";
const noBackOff: BackOff = { isInBackOff: () => false, next: () => {} };

describe.skipIf(!canRunContainerd())("container GC on containerd", () => {
  let ctd: TestContainerd;
  let rt: Runtime;

  beforeAll(async () => {
    ctd = await acquireContainerd();
    mkdirSync(BASE, { recursive: true });
    rt = createKubeRuntime({ cri: ctd.cri, podLogsDir: join(BASE, "logs"), rootDir: join(BASE, "root") });
  }, 600_000);

  afterAll(async () => {
    await tearDownPods(ctd, () => removeNodePods(rt, NODE), `/bunlet-cgc-unused-${PID}`, BASE);
  }, 120_000);

  test("a crash loop keeps one dead container per name; a removed pod leaves nothing", async () => {
    const { pod } = decodePod(
      {
        metadata: { name: `crash-${NODE}`, namespace: "default", uid: `gc-${PID}` },
        spec: {
          hostNetwork: true,
          terminationGracePeriodSeconds: 1,
          initContainers: [{ name: "init", image: ctd.images.busybox, command: ["true"] }],
          containers: [{ name: "app", image: ctd.images.busybox, command: ["sh", "-c", "exit 1"] }],
        },
      },
      "test",
    );
    const uid = pod!.metadata.uid;
    const status = () => rt.getPodStatus(uid, pod!.metadata.name, "default");
    const dead = async (name: string) => (await status()).containers.filter((c) => c.name === name && c.state === "exited").length;
    // Sync without back-off until four app instances died.
    await until(
      "4 dead app containers",
      async () => {
        const st = await status();
        if (!st.containers.some((c) => c.state === "running")) await rt.syncPod(pod!, st, noBackOff);
        return (await dead("app")) >= 4 || undefined;
      },
      60_000,
      { intervalMs: 200 },
    );
    // The instance started last may still be running: GC keeps one dead container only once it died.
    await until("no app running", async () => !(await status()).containers.some((c) => c.state === "running") || undefined, 30_000, { intervalMs: 100 });

    await rt.garbageCollect!({ contentRemovable: () => false, allSourcesReady: true });
    expect(await dead("app")).toBe(1);
    expect(await dead("init")).toBe(1);
    const logDir = join(BASE, "logs", `default_crash-${NODE}_${uid}`);
    expect(readdirSync(join(logDir, "app")).length).toBeLessThanOrEqual(2); // the kept one (+ one started since)

    await rt.killPod({ uid, name: pod!.metadata.name, namespace: "default" }, 1, pod!);
    await rt.garbageCollect!({ contentRemovable: (u) => u === uid, allSourcesReady: true });
    const after = await status();
    expect(after.containers).toEqual([]);
    expect(after.sandboxes).toEqual([]);
    expect(existsSync(logDir)).toBe(false);
  }, 120_000);
});
