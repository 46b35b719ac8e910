// Scenario (b): a fast memory ramp (≥ 500 MB/s) under a hard threshold. The hog asks for 1.5 GiB, more
// than the 1 GiB kubepods limit, so if bunlet were late the kernel OOM killer would end it. Verified:
// evicted by bunlet (trace + status Evicted, not OOMKilled), kubepods never hit its limit
// (v1 memory.failcnt and memory.oom_control oom_kill; v2 memory.events max and oom_kill) and the
// kernel's OOM-kill counter did not move for our pods (pod cgroups sampled while they exist,
// /proc/vmstat oom_kill reported).
//   bun scripts/chaos/fast-ramp.ts
import { cli, hostOomKills, isEvicted, MIB, type Harness, type Scenario } from "./lib.ts";

const ALLOCATABLE = 1024 * MIB;
const RATE_MIB_S = 600; // 629 MB/s
const THRESHOLD_MIB = 400; // crossed at 624 MiB of pods' working set

export const fastRamp: Scenario = {
  name: "fast-ramp",
  description: `${RATE_MIB_S} MiB/s memory ramp towards 1.5 GiB under a hard threshold, 1 GiB kubepods limit → evicted before the kernel OOM killer acts`,
  async run(h: Harness) {
    await h.useSharedContainerd();
    h.addPod("steady", { command: ["sh", "-c", "exec sleep 2147483647"], requests: { cpu: "50m", memory: "64Mi" }, limits: { cpu: "50m", memory: "64Mi" } });
    await h.start({
      allocatableBytes: ALLOCATABLE,
      config: { evictionHard: { "memory.available": `${THRESHOLD_MIB}Mi` } },
    });
    const kubepods = h.cgroupDir("memory", "kubepods");
    const oomBefore = hostOomKills();
    const failBefore = h.memoryCounters(kubepods).limitHits;

    await h.waitNotifierArmed("hard");
    h.addPod("ramp", { image: h.images.memhog, args: ["1536", String(RATE_MIB_S)], terminationGracePeriodSeconds: 0 });
    const running = await h.waitRunning(["ramp"]);
    const uid = running.get("ramp")!.metadata.uid!;
    const podDir = h.podCgroupDir("memory", uid, "BestEffort");
    h.say(`ramp running: 1536 MiB at ${RATE_MIB_S} MiB/s (kubepods limit 1024 MiB, threshold at ~624 MiB)`);

    // Sample the pod cgroup's OOM counters while it exists (it goes away with the pod).
    let podOomKills = 0;
    let podUnderOom = 0;
    let peakBytes = 0;
    const sample = () => {
      const pc = h.memoryCounters(podDir);
      podOomKills = Math.max(podOomKills, pc.oomKills);
      podUnderOom = Math.max(podUnderOom, pc.underOom);
      peakBytes = Math.max(peakBytes, h.memoryCounters(kubepods).peakBytes);
    };
    // The ramp's pace is the host's (see h.waitRamp): wait for it, without a deadline, to come within
    // 64 MiB of the line (or past it: the trace already has the eviction), reading only cgroup files and
    // the trace — no HTTP, so the harness leaves the CPU to the hog. Then bunlet's part, bounded.
    const lineBytes = ALLOCATABLE - THRESHOLD_MIB * MIB;
    await h.waitRamp("the ramp to near the threshold", kubepods, lineBytes - 64 * MIB, { done: () => (sample(), h.trace()[0]), intervalMs: 20 });
    await h.waitFor(
      "the ramp pod to be evicted",
      async () => {
        sample();
        return isEvicted(await h.pod("ramp"));
      },
      20_000,
      50,
    );
    h.say("ramp evicted");
    const rec = await h.waitFor("the eviction trace record", () => h.trace()[0], 15_000);

    const kp = h.memoryCounters(kubepods);
    const failAfter = kp.limitHits;
    const oomAfter = hostOomKills();
    const pod = await h.pod("ramp");
    const term = pod?.status?.containerStatuses?.[0]?.state?.terminated;
    h.check(
      "evicted by bunlet (trace record for the ramp pod)",
      rec.pod === `default/${h.podName("ramp")}`,
      `signal=${rec.signal} trigger=${rec.trigger.kind} signalSent=${rec.latencyMs.stopSignalSent} ms after the crossing`,
    );
    h.check("container not OOMKilled", term?.reason !== "OOMKilled", `terminated reason=${term?.reason ?? "-"} exitCode=${term?.exitCode ?? "-"}`);
    h.check(
      "kubepods never hit its limit (failcnt / memory.events max unchanged)",
      failAfter === failBefore,
      `failcnt ${failBefore} → ${failAfter}, peak ${(peakBytes / MIB).toFixed(0)} MiB of 1024 MiB`,
    );
    h.check(
      "0 OOM kills in kubepods and the pod cgroup (oom_control / memory.events)",
      kp.oomKills === 0 && podOomKills === 0 && podUnderOom === 0,
      `kubepods oom_kill=${kp.oomKills} pod oom_kill=${podOomKills} under_oom=${podUnderOom}`,
    );
    h.check(
      "kernel OOM-kill counter (/proc/vmstat oom_kill) did not move",
      oomAfter === oomBefore,
      `${oomBefore} → ${oomAfter} (host-wide; another process's OOM would show here too)`,
    );
    // v1: the memcg threshold notifier; v2: the working-set watch (bunlet's v2 fast path). Either way the
    // trace names the notifier's threshold as the reason; a periodic-loop eviction fails this check.
    h.check(
      "triggered by the kernel notification",
      rec.trigger.kind === "kernel",
      `trigger=${JSON.stringify(rec.trigger)} (cgroup v${h.layout.version}: ${h.layout.version === 1 ? "memcg threshold notifier" : "working-set watch"})`,
    );
  },
};

if (import.meta.main) await cli(fastRamp);
