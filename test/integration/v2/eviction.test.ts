// Node-pressure eviction on cgroup v2: dist/bunlet on containerd with kubepods fenced at node
// allocatable; a BestEffort memory hog crosses allocatableMemory.available and is evicted, a Burstable
// pod stays. On v2 there is no memcg threshold notification, so this is the periodic path (the v2 fast
// path is issue #10's later part). Runs where /sys/fs/cgroup is a cgroup2 mount (the guest via
// in-guest.test.ts); skips on a v1 host.
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { guestGate, memTotalBytes, MiB, MOUNT, useGuestNode } from "../../support/guest-node.ts";
import { staticPodYaml } from "../../support/manifests.ts";
import { until } from "../../support/wait.ts";

const onV2 = guestGate("cgroup2", "cgroup v2 eviction tests");

describe.skipIf(!onV2)("eviction on cgroup v2 (containerd, runc, real kernel)", () => {
  const n = useGuestNode({ name: "v2-evict", node: "v2e" });

  test("a BestEffort hog past allocatableMemory.available is evicted; the Burstable pod stays", async () => {
    const allocatable = 400 * MiB;
    const flags = n.configFlags([
      "enforceNodeAllocatable: [pods]",
      `systemReserved: { memory: "${memTotalBytes() - allocatable}" }`,
      "evictionHard: { memory.available: 150Mi }",
      "evictionPressureTransitionPeriod: 2s",
      "evictStaticPods: true",
    ]);
    writeFileSync(
      join(n.manifests, "steady.yaml"),
      staticPodYaml("steady", { image: n.ctd.images.busybox, command: ["sh", "-c", "exec sleep 3600"], terminationGracePeriodSeconds: 1, container: "      resources: { requests: { memory: 16Mi } }\n" }),
    );
    writeFileSync(join(n.manifests, "hog.yaml"), staticPodYaml("hog", { image: n.ctd.images.memhog, args: ["300", "50"], terminationGracePeriodSeconds: 1 }));
    const p = await n.start(flags);

    // QoS cgroups are created once the runtime answers, after /healthz is up.
    const kubepodsMax = join(MOUNT, n.cgroupRoot, "kubepods", "memory.max");
    // mkdir makes memory.max ("max") before the manager writes the limit: wait for the write.
    await until("kubepods' memory.max written", () => existsSync(kubepodsMax) && readFileSync(kubepodsMax, "utf8").trim() !== "max", 60_000, { intervalMs: 100 });
    expect(readFileSync(kubepodsMax, "utf8").trim()).toBe(String(allocatable));
    const evicted = await until(
      "the hog evicted",
      async () => {
        const h = await n.pod("hog");
        return h?.status?.phase === "Failed" ? h : undefined;
      },
      120_000,
      { intervalMs: 250 },
    );
    expect(evicted.status?.reason).toBe("Evicted");
    expect(evicted.status?.message).toContain("memory");
    expect((await n.pod("steady"))?.status?.phase).toBe("Running");
    expect(p.stderr()).toMatch(/evict/i);
  }, 300_000);
});
