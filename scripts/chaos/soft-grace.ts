// Scenario (c): a soft threshold with a grace period. The hog crosses the soft
// allocatableMemory.available threshold and stays above it (below the hard one); bunlet must not
// evict it before the grace period has passed since the crossing, and must evict it after.
//   bun scripts/chaos/soft-grace.ts
import { cli, containerFingerprint, isEvicted, isRunning, MIB, traceTimeMs, type Harness, type Scenario } from "./lib.ts";

const ALLOCATABLE = 1024 * MIB;
const SOFT_MIB = 400; // crossed at ~624 MiB of pod working set
const GRACE_S = 6;

export const softGrace: Scenario = {
  name: "soft-grace",
  description: `soft allocatableMemory.available<${SOFT_MIB}Mi with ${GRACE_S}s grace → no eviction before the grace period, eviction after`,
  async run(h: Harness) {
    await h.useSharedContainerd();
    h.addPod("steady", { command: ["sh", "-c", "exec sleep 2147483647"], requests: { cpu: "50m", memory: "64Mi" }, limits: { cpu: "50m", memory: "64Mi" } });
    await h.start({
      allocatableBytes: ALLOCATABLE,
      config: {
        evictionHard: { "memory.available": "100Mi" }, // copied onto allocatableMemory.available<100Mi: never reached here
        evictionSoft: { "allocatableMemory.available": `${SOFT_MIB}Mi` },
        evictionSoftGracePeriod: { "allocatableMemory.available": `${GRACE_S}s` },
        evictionMaxPodGracePeriod: 1,
      },
    });
    const steadyBefore = containerFingerprint(await h.pod("steady"));
    const kubepods = h.cgroupDir("memory", "kubepods");
    const crossAtBytes = ALLOCATABLE - SOFT_MIB * MIB;

    // 800 MiB at 200 MiB/s, held: above the soft threshold, well under the hard one and the limit.
    await h.waitNotifierArmed("soft");
    h.addPod("hog", { image: h.images.memhog, args: ["800", "200"] });
    await h.waitRunning(["hog"]);
    // However slowly the host lets the hog ramp (h.waitRamp): the grace period counts from the crossing.
    // Polled every 10 ms, cheaply, so crossedAt is late by little more than that.
    const crossedAt = await h.waitRamp("the pods' working set to cross the soft threshold", kubepods, crossAtBytes + 1, { intervalMs: 10 });
    h.say(`soft threshold crossed (kubepods working set > ${ALLOCATABLE / MIB - SOFT_MIB} MiB); grace ${GRACE_S}s`);

    // During the grace period the hog must keep running; poll until it is evicted. Every 500 ms: the
    // check needs ~1 s resolution, and on a one-CPU guest a 10 Hz /pods poll is load on bunlet's main
    // thread during the very cycles it measures.
    let earliestEvictionSeen: number | undefined;
    let lastRunningAt = crossedAt;
    await h.waitFor(
      "the hog to be evicted after the grace period",
      async () => {
        const p = await h.pod("hog");
        if (isRunning(p)) lastRunningAt = Date.now();
        if (isEvicted(p) || p?.status?.phase === "Failed") earliestEvictionSeen = Date.now();
        return earliestEvictionSeen;
      },
      GRACE_S * 1000 + 20_000,
      500,
    );
    const rec = await h.waitFor("the eviction trace record", () => h.trace()[0], 15_000);
    const decisionMs = traceTimeMs(rec.timestamps.decision);
    const afterS = (decisionMs - crossedAt) / 1000;
    h.say(`hog evicted: decision ${afterS.toFixed(1)} s after the crossing`);
    h.check(
      `no eviction before the ${GRACE_S}s grace period`,
      decisionMs >= crossedAt + GRACE_S * 1000 - 250 && lastRunningAt >= crossedAt + (GRACE_S - 1) * 1000,
      `decision ${afterS.toFixed(2)} s after the crossing; hog last seen Running ${((lastRunningAt - crossedAt) / 1000).toFixed(1)} s after it`,
    );
    h.check("evicted after the grace period (within one 10 s monitoring period)", afterS <= GRACE_S + 12, `${afterS.toFixed(1)} s`);
    h.check(
      "evicted for the soft allocatableMemory.available threshold",
      rec.pod === `default/${h.podName("hog")}` && rec.signal === "allocatableMemory.available",
      `pod=${rec.pod} signal=${rec.signal} observed=${rec.observed} threshold=${rec.threshold} grace=${rec.gracePeriodSeconds}s`,
    );
    h.check("pod grace period capped by evictionMaxPodGracePeriod", rec.gracePeriodSeconds === 1, `gracePeriodSeconds=${rec.gracePeriodSeconds}`);
    const hog = await h.pod("hog");
    h.check("hog status Failed/Evicted", isEvicted(hog), `${hog?.status?.phase}/${hog?.status?.reason}`);
    const steady = await h.pod("steady");
    h.check("steady kept running", isRunning(steady) && containerFingerprint(steady) === steadyBefore, containerFingerprint(steady));
  },
};

if (import.meta.main) await cli(softGrace);
