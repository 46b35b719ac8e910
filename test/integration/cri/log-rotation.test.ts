// Container log rotation on a private containerd through the pod lifecycle, as the agent wires it:
// a container writing fast with containerLogMaxSize 1Ki gets its log rotated every monitor interval
// (kuberuntime: ListContainers + ContainerStatus.log_path, CRI ReopenContainerLog), the rotated files
// stay within containerLogMaxFiles (older ones gzipped) and the container keeps writing, without a
// gap, into the reopened log.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { createPodCgroupManager } from "../../../src/pod/cm/container-manager.ts";
import { createKubeRuntime } from "../../../src/pod/kuberuntime/manager.ts";
import { createPodLifecycle } from "../../../src/pod/lifecycle.ts";
import type { PodLifecycle } from "../../../src/pod/lifecycle-types.ts";
import type { Runtime } from "../../../src/pod/runtime.ts";
import { type TestContainerd, acquireContainerd, canRunContainerd, removeNodePods, tearDownPods } from "../../support/containerd.ts";
import { staticPodYaml } from "../../support/manifests.ts";
import { until } from "../../support/wait.ts";

const PID = process.pid;
const CGROUP_ROOT = `/bunlet-lr-${PID}`;
const BASE = `/tmp/bunlet-lr-${PID}`;
const MANIFESTS = join(BASE, "manifests");
const LOGS = join(BASE, "logs");
const NODE = "lrnode";
const MAX_FILES = 3;

/** Sequence numbers of the "line N" records of a CRI-format log. */
const seqs = (text: string) => [...text.matchAll(/ stdout F line (\d+) /g)].map((m) => Number(m[1]));

describe.skipIf(!canRunContainerd())("container log rotation on containerd", () => {
  let ctd: TestContainerd;
  let rt: Runtime;
  let lc: PodLifecycle | undefined;

  beforeAll(async () => {
    ctd = await acquireContainerd();
    mkdirSync(MANIFESTS, { recursive: true });
    rt = createKubeRuntime({ cri: ctd.cri, podLogsDir: LOGS, rootDir: join(BASE, "root") });
  }, 600_000);

  afterAll(async () => {
    await lc?.stop();
    await tearDownPods(ctd, () => removeNodePods(rt, NODE), CGROUP_ROOT, BASE);
  }, 120_000);

  test("a fast writer's log is rotated, bounded by containerLogMaxFiles, and written on after each reopen", async () => {
    const pad = "x".repeat(100);
    writeFileSync(
      join(MANIFESTS, "chatty.yaml"),
      staticPodYaml("chatty", {
        image: "bunlet.local/busybox:1",
        command: ["sh", "-c", `i=0; while true; do i=$((i+1)); echo "line $i ${pad}"; usleep 2000; done`],
        terminationGracePeriodSeconds: 2,
      }),
    );
    lc = createPodLifecycle({
      runtime: rt,
      cgroups: createPodCgroupManager({ cgroupRoot: CGROUP_ROOT, podPidsLimit: 256 }),
      config: {
        nodeName: NODE,
        hostIP: "127.0.0.1",
        staticPodPath: MANIFESTS,
        fileCheckFrequencyMs: 20_000,
        syncFrequencyMs: 60_000,
        errorRetryMs: 1_000,
        containerLogMaxSize: "1Ki",
        containerLogMaxFiles: MAX_FILES,
        // Upstream's minimum containerLogMonitorInterval is 3 s; 1 s keeps rotations in distinct seconds.
        containerLogMonitorIntervalMs: 1_000,
      },
    });
    await lc.start();
    const podDir = await until("pod log directory", () => existsSync(LOGS) && readdirSync(LOGS).find((d) => d.startsWith(`default_chatty-${NODE}_`)));
    const dir = join(LOGS, podDir, "main");
    const rotatedNames = () => (existsSync(dir) ? readdirSync(dir).filter((f) => f.startsWith("0.log.") && !f.endsWith(".tmp")) : []);

    // Watch several rotations; the rotated files never exceed containerLogMaxFiles - 1.
    const seen = new Set<string>();
    let most = 0;
    await until(
      "four rotations",
      () => {
        const names = rotatedNames();
        most = Math.max(most, names.length);
        for (const n of names) seen.add(n.replace(/\.gz$/, ""));
        return seen.size >= 4;
      },
      60_000,
    );
    expect(most).toBeLessThanOrEqual(MAX_FILES - 1);

    // Stop rotating (the container keeps running), then look at the files at rest.
    await lc.stop();
    lc = undefined;
    const names = rotatedNames().sort();
    expect(names.length).toBe(MAX_FILES - 1);
    const [older, newest] = names as [string, string];
    expect(older.endsWith(".gz")).toBe(true);
    expect(newest).toMatch(/^0\.log\.\d{8}-\d{6}$/);
    const olderSeqs = seqs(gunzipSync(readFileSync(join(dir, older))).toString());
    const newestSeqs = seqs(readFileSync(join(dir, newest), "utf8"));
    expect(olderSeqs.length).toBeGreaterThan(0);
    expect(newestSeqs[0]).toBe(olderSeqs.at(-1)! + 1);

    // The container writes on into the reopened 0.log, carrying on right after the rotated lines.
    const current = join(dir, "0.log");
    const size0 = statSync(current).size;
    await until("the current log to grow", () => statSync(current).size > size0, 10_000);
    expect(seqs(readFileSync(current, "utf8"))[0]).toBe(newestSeqs.at(-1)! + 1);
  }, 120_000);
});
