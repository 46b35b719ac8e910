// dist/bunlet running a static pod on containerd + runc on a real cgroup v2 kernel: kubepods limited
// to node allocatable, the pod in its QoS place with its limits, the container below it with the
// v2 `unified` settings, pod memory in /stats/summary. Runs where /sys/fs/cgroup is a cgroup2 mount
// (the v2 guest via in-guest.test.ts, or a v2 host); skips on a v1 host.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { isUnifiedMount } from "../../../src/pod/cgroups-unified.ts";
import type { Pod } from "../../../src/pod/types.ts";
import { staticPodFlags } from "../../support/agent.ts";
import { ensureBuilt, freePort, killAll, pollUntil, spawnBunlet, waitForHealthz, type BunletProcess } from "../../support/binary.ts";
import { acquireContainerd, removeSandboxes, tearDownPods, type TestContainerd } from "../../support/containerd.ts";
import { staticPodYaml } from "../../support/manifests.ts";

const MOUNT = "/sys/fs/cgroup";
const onV2 = isUnifiedMount(MOUNT) && process.getuid?.() === 0;
if (!onV2) console.warn("skipping bunlet-on-cgroup-v2 pod tests: /sys/fs/cgroup is not a cgroup2 mount (they run in the guest: in-guest.test.ts)");

const PID = process.pid;
const MiB = 2 ** 20;

describe.skipIf(!onV2)("bunlet pods on cgroup v2 (containerd, runc, real kernel)", () => {
  let ctd: TestContainerd;
  const base = `/tmp/bunlet-v2-pods-${PID}`;
  const manifests = join(base, "manifests");
  const cgroupRoot = `/bunlet-v2-${PID}`;
  const node = `v2-${PID}`;
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

  test("kubepods = allocatable; the pod and its container carry their v2 limits; memory in /stats/summary", async () => {
    writeFileSync(
      join(manifests, "g.yaml"),
      staticPodYaml("g", {
        image: ctd.images.busybox,
        command: ["sh", "-c", "exec sleep 3600"],
        terminationGracePeriodSeconds: 1,
        container: "      resources: { limits: { memory: 48Mi, cpu: 100m } }\n",
      }),
    );
    p = spawnBunlet([...staticPodFlags({ rootDir: join(base, "root"), manifests, cgroupRoot, endpoint: ctd.endpoint, node, port }), "--file-check-frequency=1s", "--system-reserved=memory=100Mi"]);
    await waitForHealthz(p, `http://127.0.0.1:${port}/healthz`, 60_000);
    const pod = async () => ((await (await fetch(`http://127.0.0.1:${port}/pods`)).json()) as { items: Pod[] }).items.find((x) => x.metadata.name === `g-${node}`);
    await pollUntil(async () => (await pod())?.status?.phase === "Running", "pod g Running", 120_000, 200);
    const uid = (await pod())!.metadata.uid;

    const memTotal = Number(/^MemTotal:\s+(\d+) kB/m.exec(readFileSync("/proc/meminfo", "utf8"))![1]) * 1024;
    const cg = (...parts: string[]) => readFileSync(join(MOUNT, cgroupRoot, ...parts), "utf8").trim();
    expect(cg("kubepods", "memory.max")).toBe(String(memTotal - 100 * MiB));
    expect(cg("kubepods", "cgroup.subtree_control").split(" ")).toEqual(expect.arrayContaining(["cpu", "memory", "pids"]));

    const podDir = ["kubepods", `pod${uid}`]; // Guaranteed: directly under kubepods
    expect(cg(...podDir, "memory.max")).toBe(String(48 * MiB));
    expect(cg(...podDir, "cpu.max")).toBe("10000 100000");
    expect(cg(...podDir, "cpu.weight")).toBe("4"); // 102 shares
    const containerDirs = readdirSync(join(MOUNT, cgroupRoot, ...podDir), { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);
    expect(containerDirs.length).toBeGreaterThanOrEqual(2); // the sandbox (pause) and "main"
    const limited = containerDirs.filter((d) => cg(...podDir, d, "memory.max") === String(48 * MiB));
    expect(limited.length).toBe(1);
    expect(cg(...podDir, limited[0]!, "memory.oom.group")).toBe("1");

    await pollUntil(
      async () => {
        const s = (await (await fetch(`http://127.0.0.1:${port}/stats/summary`)).json()) as { pods: { podRef: { name: string }; memory?: { workingSetBytes?: number } }[] };
        return (s.pods.find((x) => x.podRef.name === `g-${node}`)?.memory?.workingSetBytes ?? 0) > 0;
      },
      "pod g memory in /stats/summary",
      30_000,
      200,
    );
  }, 300_000);
});
