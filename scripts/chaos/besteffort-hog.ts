// Scenario (a): a BestEffort memory hog among a Guaranteed and a Burstable pod. Under a hard
// allocatableMemory.available threshold (evictionHard memory.available, which bunlet copies onto the
// kubepods signal as the kubelet does) only the hog is evicted, the others keep running (same
// containers, no restarts), and MemoryPressure is set, then cleared once the transition period has
// passed without the signal being met.
//   bun scripts/chaos/besteffort-hog.ts
import { notifierThreadEvictionFromEnv } from "../../src/wire/eviction.ts";
import { cli, containerFingerprint, isEvicted, MIB, type Harness, type Scenario } from "./lib.ts";

const ALLOCATABLE = 1024 * MIB;
const TRANSITION_S = 3;
const THRESHOLD_MIB = 300;

export const besteffortHog: Scenario = {
  name: "besteffort-hog",
  description:
    "BestEffort memory hog among Guaranteed and Burstable pods → only the hog is evicted; MemoryPressure set, then cleared after the transition period",
  async run(h: Harness) {
    await h.useSharedContainerd();
    h.addPod("steady", { command: ["sh", "-c", "exec sleep 2147483647"], requests: { cpu: "50m", memory: "64Mi" }, limits: { cpu: "50m", memory: "64Mi" } });
    h.addPod("ticker", { command: ["sh", "-c", "exec sleep 2147483647"], requests: { memory: "32Mi" }, limits: { memory: "128Mi" } });
    await h.start({
      allocatableBytes: ALLOCATABLE,
      config: {
        evictionHard: { "memory.available": `${THRESHOLD_MIB}Mi` },
        evictionPressureTransitionPeriod: `${TRANSITION_S}s`,
      },
    });
    const before = new Map([
      ["steady", containerFingerprint(await h.pod("steady"))],
      ["ticker", containerFingerprint(await h.pod("ticker"))],
    ]);
    // The hog arrives last so the others are settled: 900 MiB at 200 MiB/s, then held. It stays under
    // the 1 GiB kubepods limit, so only eviction (not the OOM killer) can end it.
    await h.waitNotifierArmed("hard");
    h.addPod("hog", { image: h.images.memhog, args: ["900", "200"] });
    await h.waitRunning(["hog"]);
    h.say("hog running: ramping 900 MiB at 200 MiB/s; threshold crossed at ~724 MiB of pod memory");

    // The ramp's pace is the host's (h.waitRamp): wait, reading only kubepods' memory files, until it
    // nears the line (~724 MiB) or the eviction already happened; then watch bunlet, bounded.
    const kubepods = h.cgroupDir("memory", "kubepods");
    await h.waitRamp("the hog to near the threshold", kubepods, ALLOCATABLE - THRESHOLD_MIB * MIB - 64 * MIB, { done: () => h.trace()[0], intervalMs: 100 });

    // Watch the node condition through /debug/eviction while waiting for the eviction.
    let pressureSeenAt: number | undefined;
    let evictedAt: number | undefined;
    await h.waitFor(
      "the hog to be evicted",
      async () => {
        const dbg = await h.debugEviction().catch(() => undefined);
        if (!pressureSeenAt && (dbg?.nodeConditions as string[] | undefined)?.includes("MemoryPressure")) pressureSeenAt = Date.now();
        if (isEvicted(await h.pod("hog"))) evictedAt = Date.now();
        return evictedAt;
      },
      25_000,
    );
    h.say("hog evicted");
    const rec = await h.waitFor("the eviction trace record", () => h.trace()[0], 15_000);
    if (!pressureSeenAt && rec.nodeConditions.includes("MemoryPressure")) pressureSeenAt = evictedAt;
    h.check("MemoryPressure was set", pressureSeenAt !== undefined, `trace nodeConditions=[${rec.nodeConditions.join(",")}]`);

    // Cleared only after the transition period with the signal no longer met.
    let clearedAt: number | undefined;
    await h.waitFor(
      "MemoryPressure to clear",
      async () => {
        const dbg = await h.debugEviction();
        if (!(dbg.nodeConditions as string[]).includes("MemoryPressure")) clearedAt = Date.now();
        return clearedAt;
      },
      25_000,
      100,
    );
    const heldS = (clearedAt! - evictedAt!) / 1000;
    h.check(
      `MemoryPressure cleared after the ${TRANSITION_S}s transition period`,
      heldS >= TRANSITION_S - 0.5,
      `cleared ${heldS.toFixed(1)} s after the eviction`,
    );

    const trace = h.trace();
    h.check(
      "exactly one eviction, of the hog",
      trace.length === 1 && trace[0]!.pod === `default/${h.podName("hog")}`,
      trace.map((r) => r.pod).join(",") || "none",
    );
    h.check(
      "evicted for allocatableMemory.available",
      rec.signal === "allocatableMemory.available",
      `signal=${rec.signal} observed=${rec.observed} threshold=${rec.threshold}`,
    );
    h.check("the hog was ranked first", rec.ranked[0]?.pod === `default/${h.podName("hog")}`, rec.ranked.map((r) => r.pod).join(","));
    // cgroup v1's default: the hard memory eviction decided and signalled on the kernel notifier
    // thread (src/kernel/fast-evict.ts); BUNLET_NOTIFIER_THREAD_EVICTION=0 leaves it to the main thread's cycle.
    if (h.layout.version === 1) {
      const want = notifierThreadEvictionFromEnv(process.env) ? "notifier-thread" : undefined;
      h.check(
        `decided ${want ? "on the kernel notifier thread (the default)" : "by the main thread's cycle (BUNLET_NOTIFIER_THREAD_EVICTION off)"}`,
        rec.decidedBy === want,
        `decidedBy=${rec.decidedBy ?? "the main thread's cycle"}`,
      );
    }
    const hog = await h.pod("hog");
    h.check("the hog's status says Evicted", isEvicted(hog), `phase=${hog?.status?.phase} reason=${hog?.status?.reason} message=${hog?.status?.message}`);
    for (const [name, fp] of before) {
      const p = await h.pod(name);
      h.check(
        `${name} kept running (same container, no restart)`,
        p?.status?.phase === "Running" && containerFingerprint(p) === fp,
        `${p?.status?.phase} ${containerFingerprint(p)}`,
      );
    }
  },
};

if (import.meta.main) await cli(besteffortHog);
