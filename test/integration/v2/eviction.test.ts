// Node-pressure eviction on cgroup v2: dist/bunlet on containerd with kubepods fenced at node
// allocatable (400 MiB, evictionHard memory.available 150Mi); a BestEffort memhog ramps past
// allocatableMemory.available and is evicted, a Burstable pod stays. Two ways to the same outcome:
//   - the periodic path (kernelMemcgNotification off): the 10 s loop's cycle decides;
//   - the v2 fast path (kernelMemcgNotification: true → the working-set watch) with the eviction decided on
//     the working-set thread (the default; BUNLET_NOTIFIER_THREAD_EVICTION=1 set here all the same): it
//     decides at its crossing from the plan the main thread published (pod cgroups' memory.current /
//     memory.stat, QoS dir link counts on cgroup2, the containers' pidfds) and sends the hog its SIGTERM
//     itself; the main thread records it as an ordinary eviction (Failed/Evicted).
// Runs where /sys/fs/cgroup is a cgroup2 mount (the guest via in-guest.test.ts); skips on a v1 host.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Pod } from "../../../src/pod/types.ts";
import { guestGate, memTotalBytes, MiB, MOUNT, useGuestNode } from "../../support/guest-node.ts";
import { staticPodYaml } from "../../support/manifests.ts";
import { until } from "../../support/wait.ts";

const onV2 = guestGate("cgroup2", "cgroup v2 eviction tests");
const ALLOCATABLE = 400 * MiB;

type GuestNode = ReturnType<typeof useGuestNode>;

/** Starts bunlet with the fence and threshold (+ `extra` config lines) and a Burstable "steady" pod; resolves once kubepods' memory.max is written. */
async function startFencedNode(n: GuestNode, extra: string[], flags: string[] = []) {
  const config = n.configFlags([
    "enforceNodeAllocatable: [pods]",
    `systemReserved: { memory: "${memTotalBytes() - ALLOCATABLE}" }`,
    "evictionHard: { memory.available: 150Mi }",
    "evictionPressureTransitionPeriod: 2s",
    "evictStaticPods: true",
    ...extra,
  ]);
  writeFileSync(
    join(n.manifests, "steady.yaml"),
    staticPodYaml("steady", {
      image: n.ctd.images.busybox,
      command: ["sh", "-c", "exec sleep 3600"],
      terminationGracePeriodSeconds: 1,
      container: "      resources: { requests: { memory: 16Mi } }\n",
    }),
  );
  const p = await n.start([...config, ...flags]);
  // QoS cgroups are created once the runtime answers, after /healthz is up; mkdir makes memory.max
  // ("max") before the manager writes the limit: wait for the write.
  const kubepodsMax = join(MOUNT, n.cgroupRoot, "kubepods", "memory.max");
  await until("kubepods' memory.max written", () => existsSync(kubepodsMax) && readFileSync(kubepodsMax, "utf8").trim() !== "max", 60_000, { intervalMs: 100 });
  expect(readFileSync(kubepodsMax, "utf8").trim()).toBe(String(ALLOCATABLE));
  return p;
}

/** The hog's pod once it is Failed, with reason Evicted and a memory message; the steady pod still Running. */
async function expectHogEvicted(n: GuestNode): Promise<Pod> {
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
  return evicted;
}

describe.skipIf(!onV2)("eviction on cgroup v2 (containerd, runc, real kernel)", () => {
  const n = useGuestNode({ name: "v2-evict", node: "v2e" });

  test("a BestEffort hog past allocatableMemory.available is evicted by the periodic loop; the Burstable pod stays", async () => {
    writeFileSync(join(n.manifests, "hog.yaml"), staticPodYaml("hog", { image: n.ctd.images.memhog, args: ["300", "50"], terminationGracePeriodSeconds: 1 }));
    const p = await startFencedNode(n, []);
    await expectHogEvicted(n);
    expect(p.stderr()).toMatch(/evict/i);
  }, 300_000);
});

describe.skipIf(!onV2)("notifier-thread eviction on cgroup v2 (containerd, runc, real kernel)", () => {
  const n = useGuestNode({ name: "v2-ntevict", node: "v2nt" });
  const env = process.env.BUNLET_NOTIFIER_THREAD_EVICTION;
  beforeAll(() => void (process.env.BUNLET_NOTIFIER_THREAD_EVICTION = "1")); // spawnBunlet passes process.env on
  afterAll(() => {
    if (env === undefined) delete process.env.BUNLET_NOTIFIER_THREAD_EVICTION;
    else process.env.BUNLET_NOTIFIER_THREAD_EVICTION = env;
  });

  test("the working-set thread signals the hog at the crossing; the hog ends Evicted, the Burstable pod stays", async () => {
    const p = await startFencedNode(n, ["kernelMemcgNotification: true"], ["-v=2"]);
    await n.waitRunning("steady");
    // The hog ramps slowly enough (the line, 250 MiB of working set, ~10 s away) for the plan to be rebuilt with its container.
    writeFileSync(join(n.manifests, "hog.yaml"), staticPodYaml("hog", { image: n.ctd.images.memhog, args: ["300", "25"], terminationGracePeriodSeconds: 1 }));
    await expectHogEvicted(n);
    const log = p.stderr();
    // Decided and signalled on the working-set thread (takenMs: when it saw the hog take the signal), recorded by the main thread.
    expect(
      log,
      log
        .split("\n")
        .filter((l) => /notifier.thread|working-set|evict/i.test(l))
        .join("\n"),
    ).toMatch(/the notifier thread evicted pod=\S*hog.* takenMs=/);
    expect(log).toMatch(/evicting pod=\S*hog.*decidedOn=notifier-thread/);
    // The hog got the SIGTERM (memhog's handler line in its CRI log).
    const logs = join(n.base, "logs");
    const dir = readdirSync(logs).find((d) => d.includes("_hog-"));
    expect(dir).toBeDefined();
    expect(readFileSync(join(logs, dir!, "main", "0.log"), "utf8")).toMatch(/stdout F sigterm \d+/);
  }, 300_000);
});
