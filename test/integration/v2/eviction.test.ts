// Node-pressure eviction on cgroup v2: dist/bunlet on containerd with kubepods fenced at node
// allocatable; a BestEffort memory hog crosses allocatableMemory.available and is evicted, a Burstable
// pod stays. On v2 there is no memcg threshold notification, so this is the periodic path (the v2 fast
// path is issue #10's later part). Runs where /sys/fs/cgroup is a cgroup2 mount (the guest via
// in-guest.test.ts); skips on a v1 host.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { isUnifiedMount } from "../../../src/pod/cgroups-unified.ts";
import type { Pod } from "../../../src/pod/types.ts";
import { writeStaticPodConfig } from "../../support/agent.ts";
import { ensureBuilt, freePort, killAll, spawnBunlet, waitForHealthz, type BunletProcess } from "../../support/binary.ts";
import { acquireContainerd, removeSandboxes, tearDownPods, type TestContainerd } from "../../support/containerd.ts";
import { staticPodYaml } from "../../support/manifests.ts";
import { until } from "../../support/wait.ts";

const MOUNT = "/sys/fs/cgroup";
const onV2 = isUnifiedMount(MOUNT) && process.getuid?.() === 0;
if (!onV2) console.warn("skipping cgroup v2 eviction tests: /sys/fs/cgroup is not a cgroup2 mount (they run in the guest: in-guest.test.ts)");

const PID = process.pid;
const MiB = 2 ** 20;

describe.skipIf(!onV2)("eviction on cgroup v2 (containerd, runc, real kernel)", () => {
  let ctd: TestContainerd;
  const base = `/tmp/bunlet-v2-evict-${PID}`;
  const manifests = join(base, "manifests");
  const cgroupRoot = `/bunlet-v2-evict-${PID}`;
  const node = `v2e-${PID}`;
  let p: BunletProcess | undefined;

  beforeAll(async () => {
    await ensureBuilt();
    ctd = await acquireContainerd();
    mkdirSync(manifests, { recursive: true });
  }, 600_000);

  afterAll(async () => {
    await p?.stop("SIGTERM", 5000);
    await killAll();
    await tearDownPods(ctd, () => removeSandboxes(ctd.cri, node), cgroupRoot, base);
  }, 120_000);

  test("a BestEffort hog past allocatableMemory.available is evicted; the Burstable pod stays", async () => {
    const memTotal = Number(/^MemTotal:\s+(\d+) kB/m.exec(readFileSync("/proc/meminfo", "utf8"))![1]) * 1024;
    const allocatable = 400 * MiB;
    const port = freePort();
    const config = writeStaticPodConfig(join(base, "config.yaml"), { manifests, cgroupRoot, endpoint: ctd.endpoint, port, podLogsDir: join(base, "logs") }, [
      "enforceNodeAllocatable: [pods]",
      `systemReserved: { memory: "${memTotal - allocatable}" }`,
      "evictionHard: { memory.available: 150Mi }",
      "evictionPressureTransitionPeriod: 2s",
      "evictStaticPods: true",
    ]);
    writeFileSync(
      join(manifests, "steady.yaml"),
      staticPodYaml("steady", { image: ctd.images.busybox, command: ["sh", "-c", "exec sleep 3600"], terminationGracePeriodSeconds: 1, container: "      resources: { requests: { memory: 16Mi } }\n" }),
    );
    writeFileSync(join(manifests, "hog.yaml"), staticPodYaml("hog", { image: ctd.images.memhog, args: ["300", "50"], terminationGracePeriodSeconds: 1 }));
    p = spawnBunlet([`--config=${config}`, `--root-dir=${join(base, "root")}`, `--hostname-override=${node}`]);
    await waitForHealthz(p, `http://127.0.0.1:${port}/healthz`, 60_000);
    const pod = async (name: string) => ((await (await fetch(`http://127.0.0.1:${port}/pods`)).json()) as { items: Pod[] }).items.find((x) => x.metadata.name === `${name}-${node}`);

    // QoS cgroups are created once the runtime answers, after /healthz is up.
    const kubepodsMax = join(MOUNT, cgroupRoot, "kubepods", "memory.max");
    await until("kubepods", () => existsSync(kubepodsMax), 60_000, { intervalMs: 100 });
    expect(readFileSync(kubepodsMax, "utf8").trim()).toBe(String(allocatable));
    const evicted = await until(
      "the hog evicted",
      async () => {
        const h = await pod("hog");
        return h?.status?.phase === "Failed" ? h : undefined;
      },
      120_000,
      { intervalMs: 250 },
    );
    expect(evicted.status?.reason).toBe("Evicted");
    expect(evicted.status?.message).toContain("memory");
    expect((await pod("steady"))?.status?.phase).toBe("Running");
    expect(p.stderr()).toMatch(/evict/i);
  }, 300_000);
});
