// /stats/summary and /metrics/cadvisor of dist/bunlet on a real cgroup v2 kernel: node memory (from
// the root memory.stat), the "pods" system container (kubepods' memory.current, availableBytes against
// node allocatable), and for every pod — Guaranteed, Burstable, BestEffort — memory (usage, working
// set, rss, faults), cpu, process count and its container's memory. Runs where /sys/fs/cgroup is a
// cgroup2 mount (the v2 guest via in-guest.test.ts); skips on a v1 host.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { isUnifiedMount } from "../../../src/pod/cgroups-unified.ts";
import type { Summary } from "../../../src/stats/summary.ts";
import { staticPodFlags } from "../../support/agent.ts";
import { ensureBuilt, freePort, killAll, pollUntil, spawnBunlet, waitForHealthz, type BunletProcess } from "../../support/binary.ts";
import { acquireContainerd, removeSandboxes, tearDownPods, type TestContainerd } from "../../support/containerd.ts";
import { staticPodYaml } from "../../support/manifests.ts";

const MOUNT = "/sys/fs/cgroup";
const onV2 = isUnifiedMount(MOUNT) && process.getuid?.() === 0;
if (!onV2) console.warn("skipping cgroup v2 stats tests: /sys/fs/cgroup is not a cgroup2 mount (they run in the guest: in-guest.test.ts)");

const PID = process.pid;
const MiB = 2 ** 20;
const SLEEP = ["sh", "-c", "exec sleep 3600"];
/** Each pod holds some anonymous memory (a shell variable) so its working set is well above zero. */
const HOLD = ["sh", "-c", "x=$(yes | head -c 4000000); sleep 3600"];

describe.skipIf(!onV2)("stats on cgroup v2 (containerd, runc, real kernel)", () => {
  let ctd: TestContainerd;
  const base = `/tmp/bunlet-v2-stats-${PID}`;
  const manifests = join(base, "manifests");
  const cgroupRoot = `/bunlet-v2-stats-${PID}`;
  const node = `v2s-${PID}`;
  let port = 0;
  let p: BunletProcess | undefined;

  beforeAll(async () => {
    await ensureBuilt();
    ctd = await acquireContainerd();
    mkdirSync(manifests, { recursive: true });
    port = freePort();
  }, 600_000);

  afterAll(async () => {
    await p?.stop("SIGTERM", 5000);
    await killAll();
    await tearDownPods(ctd, () => removeSandboxes(ctd.cri, node), cgroupRoot, base);
  }, 120_000);

  test("node, the pods system container and every pod have complete memory and cpu stats", async () => {
    const pods = {
      guaranteed: "      resources: { limits: { memory: 48Mi, cpu: 100m } }\n",
      burstable: "      resources: { requests: { memory: 16Mi } }\n",
      besteffort: "",
    };
    for (const [name, container] of Object.entries(pods)) {
      writeFileSync(join(manifests, `${name}.yaml`), staticPodYaml(name, { image: ctd.images.busybox, command: name === "besteffort" ? SLEEP : HOLD, terminationGracePeriodSeconds: 1, container }));
    }
    p = spawnBunlet([...staticPodFlags({ rootDir: join(base, "root"), manifests, cgroupRoot, endpoint: ctd.endpoint, node, port }), "--file-check-frequency=1s", "--system-reserved=memory=200Mi"]);
    await waitForHealthz(p, `http://127.0.0.1:${port}/healthz`, 60_000);
    const summary = async () => (await (await fetch(`http://127.0.0.1:${port}/stats/summary`)).json()) as Summary;
    const names = Object.keys(pods).map((n) => `${n}-${node}`);
    // Running pods with their containers listed by the runtime (the CRI listing is cached ~2 s).
    let s = await summary();
    await pollUntil(
      async () => {
        s = await summary();
        return names.every((n) => (s.pods.find((x) => x.podRef.name === n)?.containers?.[0]?.memory?.workingSetBytes ?? 0) > 0);
      },
      "every pod and its container with memory in /stats/summary",
      120_000,
      250,
    );

    const memTotal = Number(/^MemTotal:\s+(\d+) kB/m.exec(readFileSync("/proc/meminfo", "utf8"))![1]) * 1024;
    const m = s.node.memory!;
    expect(m.usageBytes!).toBeGreaterThan(0);
    expect(m.workingSetBytes!).toBeGreaterThan(0);
    expect(m.workingSetBytes!).toBeLessThanOrEqual(m.usageBytes!);
    expect(m.rssBytes!).toBeGreaterThan(0);
    expect(m.availableBytes).toBe(memTotal - m.workingSetBytes!);
    expect(s.node.cpu?.usageCoreNanoSeconds ?? 0).toBeGreaterThan(0);

    const podsContainer = s.node.systemContainers?.find((c) => c.name === "pods");
    expect(podsContainer?.memory?.workingSetBytes ?? 0).toBeGreaterThan(0);
    expect(podsContainer!.memory!.availableBytes).toBe(memTotal - 200 * MiB - podsContainer!.memory!.workingSetBytes!);
    expect(podsContainer?.cpu?.usageCoreNanoSeconds ?? 0).toBeGreaterThan(0);

    for (const n of names) {
      const ps = s.pods.find((x) => x.podRef.name === n)!;
      const pm = ps.memory!;
      expect({ pod: n, ws: pm.workingSetBytes! > 0, usage: pm.usageBytes! >= pm.workingSetBytes!, rss: pm.rssBytes !== undefined, faults: pm.pageFaults !== undefined }).toEqual({ pod: n, ws: true, usage: true, rss: true, faults: true });
      expect(ps.cpu?.usageCoreNanoSeconds ?? 0).toBeGreaterThan(0);
      expect(ps.process_stats?.process_count ?? 0).toBeGreaterThanOrEqual(1);
      expect(ps.containers?.map((c) => c.name)).toEqual(["main"]);
    }
    const g = s.pods.find((x) => x.podRef.name === `guaranteed-${node}`)!;
    // A limited pod cgroup reports what is left below its memory.max.
    expect(g.memory!.availableBytes).toBe(48 * MiB - g.memory!.workingSetBytes!);
    expect(s.pods.find((x) => x.podRef.name === `besteffort-${node}`)!.memory!.availableBytes).toBeUndefined();

    // /metrics/cadvisor carries the same pods' memory.
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics/cadvisor`)).text();
    for (const n of names) expect(metrics).toMatch(new RegExp(`^container_memory_working_set_bytes\\{[^}]*pod="${n}"[^}]*\\} [1-9]`, "m"));
  }, 300_000);
});
