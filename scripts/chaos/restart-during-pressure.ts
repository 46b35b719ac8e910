// Scenario (f): bunlet is killed (SIGKILL, a crash) while a hog ramps, the node goes over the hard
// threshold while no bunlet runs, then bunlet starts again: it adopts the running pods (same
// containers, no restarts) and evicts the hog — and only the hog.
//   bun scripts/chaos/restart-during-pressure.ts
import { cli, containerFingerprint, isEvicted, isRunning, MIB, type Harness, type Scenario } from "./lib.ts";

const ALLOCATABLE = 1024 * MIB;
const THRESHOLD_MIB = 300;

export const restartDuringPressure: Scenario = {
  name: "restart-during-pressure",
  description: "bunlet SIGKILLed during a ramp, node crosses the hard threshold while it is down, restarted → adopts the pods and evicts the hog only",
  async run(h: Harness) {
    await h.useSharedContainerd();
    h.addPod("steady", { command: ["sh", "-c", "exec sleep 2147483647"], requests: { cpu: "50m", memory: "64Mi" }, limits: { cpu: "50m", memory: "64Mi" } });
    h.addPod("ticker", { command: ["sh", "-c", "exec sleep 2147483647"], requests: { memory: "32Mi" }, limits: { memory: "128Mi" } });
    // 850 MiB at 100 MiB/s, held: crosses the threshold (~724 MiB of pods) about 7 s after it starts.
    h.addPod("hog", { image: h.images.memhog, args: ["850", "100"] });
    await h.start({ allocatableBytes: ALLOCATABLE, config: { evictionHard: { "memory.available": `${THRESHOLD_MIB}Mi` } } });
    const kubepods = h.cgroupDir("memory", "kubepods");
    const crossAt = ALLOCATABLE - THRESHOLD_MIB * MIB;
    const fp = new Map<string, string>();
    for (const m of ["steady", "ticker", "hog"]) fp.set(m, containerFingerprint(await h.pod(m)));

    await h.stopBunlet("SIGKILL");
    const wsAtKill = h.workingSet(kubepods);
    h.check(
      "bunlet crashed before the threshold was crossed",
      wsAtKill < crossAt,
      `pods' working set ${(wsAtKill / MIB).toFixed(0)} MiB at the kill, threshold crossed at ${(crossAt / MIB).toFixed(0)} MiB`,
    );
    await h.waitRamp("the pods to cross the threshold with no bunlet running", kubepods, crossAt + 50 * MIB, { intervalMs: 100 });
    h.say(`pressure while bunlet is down: pods' working set ${(h.workingSet(kubepods) / MIB).toFixed(0)} MiB`);

    await h.restart();
    await h.waitFor("the hog to be evicted by the restarted bunlet", async () => isEvicted(await h.pod("hog")), 30_000, 100);
    const rec = await h.waitFor("the eviction trace record", () => h.trace()[0], 15_000);
    h.say("hog evicted after the restart");
    h.check(
      "the restarted bunlet evicted the hog, once",
      h.trace().length === 1 && rec.pod === `default/${h.podName("hog")}`,
      `${h
        .trace()
        .map((r) => r.pod)
        .join(",")} signal=${rec.signal} observed=${rec.observed} threshold=${rec.threshold} trigger=${rec.trigger.kind}`,
    );
    const hog = await h.pod("hog");
    h.check(
      "the hog was adopted (same container) before it was evicted",
      (hog?.status?.containerStatuses?.[0]?.containerID ?? "") !== "" && fp.get("hog")!.includes(hog!.status!.containerStatuses![0]!.containerID!),
      `before ${fp.get("hog")} after ${containerFingerprint(hog)}`,
    );
    for (const m of ["steady", "ticker"]) {
      const p = await h.pod(m);
      h.check(`${m} adopted and kept running (same container, no restart)`, isRunning(p) && containerFingerprint(p) === fp.get(m), containerFingerprint(p));
    }
    h.check("pods' memory back under the threshold", h.workingSet(kubepods) < crossAt, `${(h.workingSet(kubepods) / MIB).toFixed(0)} MiB`);
  },
};

if (import.meta.main) await cli(restartDuringPressure);
