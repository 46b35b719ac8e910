// The notifier-thread eviction on cgroup v2, end to end: dist/bunlet with kernelMemcgNotification (the
// working-set watch) and BUNLET_NOTIFIER_THREAD_EVICTION=1; kubepods fenced at allocatable; a BestEffort
// memhog ramps past allocatableMemory.available. The working-set thread decides at its crossing from the
// plan the main thread published (pod cgroups' memory.current / memory.stat, QoS dir link counts on
// cgroup2, the containers' pidfds) and sends the hog its SIGTERM itself; the main thread records it as an
// ordinary eviction (Failed/Evicted). Runs where /sys/fs/cgroup is a cgroup2 mount (the guest via
// in-guest.test.ts); skips on a v1 host.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { guestGate, memTotalBytes, MiB, MOUNT, useGuestNode } from "../../support/guest-node.ts";
import { staticPodYaml } from "../../support/manifests.ts";
import { until } from "../../support/wait.ts";

const onV2 = guestGate("cgroup2", "the cgroup v2 notifier-thread eviction test");

describe.skipIf(!onV2)("notifier-thread eviction on cgroup v2 (containerd, runc, real kernel)", () => {
  const n = useGuestNode({ name: "v2-ntevict", node: "v2nt" });
  const env = process.env.BUNLET_NOTIFIER_THREAD_EVICTION;
  beforeAll(() => void (process.env.BUNLET_NOTIFIER_THREAD_EVICTION = "1")); // spawnBunlet passes process.env on
  afterAll(() => {
    if (env === undefined) delete process.env.BUNLET_NOTIFIER_THREAD_EVICTION;
    else process.env.BUNLET_NOTIFIER_THREAD_EVICTION = env;
  });

  test("the working-set thread signals the hog at the crossing; the hog ends Evicted, the Burstable pod stays", async () => {
    const allocatable = 400 * MiB;
    const flags = n.configFlags([
      "enforceNodeAllocatable: [pods]",
      `systemReserved: { memory: "${memTotalBytes() - allocatable}" }`,
      "evictionHard: { memory.available: 150Mi }",
      "kernelMemcgNotification: true",
      "evictionPressureTransitionPeriod: 2s",
      "evictStaticPods: true",
    ]);
    writeFileSync(
      join(n.manifests, "steady.yaml"),
      staticPodYaml("steady", { image: n.ctd.images.busybox, command: ["sh", "-c", "exec sleep 3600"], terminationGracePeriodSeconds: 1, container: "      resources: { requests: { memory: 16Mi } }\n" }),
    );
    const p = await n.start([...flags, "-v=2"]);
    const kubepodsMax = join(MOUNT, n.cgroupRoot, "kubepods", "memory.max");
    await until("kubepods' memory.max written", () => existsSync(kubepodsMax) && readFileSync(kubepodsMax, "utf8").trim() !== "max", 60_000, { intervalMs: 100 });
    await n.waitRunning("steady");
    // The hog ramps slowly enough (the line, 250 MiB of working set, ~10 s away) for the plan to be rebuilt with its container.
    writeFileSync(join(n.manifests, "hog.yaml"), staticPodYaml("hog", { image: n.ctd.images.memhog, args: ["300", "25"], terminationGracePeriodSeconds: 1 }));
    const evicted = await until(
      "the hog evicted",
      async () => {
        const h = await n.pod("hog");
        return h?.status?.phase === "Failed" ? h : undefined;
      },
      120_000,
      { intervalMs: 250 },
    );
    const log = p.stderr();
    expect(evicted.status?.reason).toBe("Evicted");
    expect(evicted.status?.message).toContain("memory");
    // Decided and signalled on the working-set thread, recorded by the main thread.
    expect(log, log.split("\n").filter((l) => /notifier.thread|working-set|evict/i.test(l)).join("\n")).toMatch(/the notifier thread evicted pod=\S*hog/);
    expect(log).toMatch(/evicting pod=\S*hog.*decidedOn=notifier-thread/);
    // The hog got the SIGTERM (memhog's handler line in its CRI log).
    const logs = join(n.base, "logs");
    const dir = readdirSync(logs).find((d) => d.includes("_hog-"));
    expect(dir).toBeDefined();
    expect(readFileSync(join(logs, dir!, "main", "0.log"), "utf8")).toMatch(/stdout F sigterm \d+/);
    expect((await n.pod("steady"))?.status?.phase).toBe("Running");
  }, 300_000);
});
