// Scenario (d): PID pressure from a fork bomb in a pod. podPidsLimit fences the bomb in its pids
// cgroup; the hard pid.available threshold is set relative to it: crossed once the node has
// PIDS_LIMIT × 0.4 more tasks than before bunlet started, which the bomb reaches (it fills its
// whole pids.max) and nothing else here comes near. That pod is evicted; the others keep running.
//   bun scripts/chaos/pid-pressure.ts
import { cli, containerFingerprint, hostMaxPid, hostTaskCount, isEvicted, isRunning, MIB, readCgroupFile, type Harness, type Scenario } from "./lib.ts";

const PIDS_LIMIT = 1000;
const MARGIN = PIDS_LIMIT * 0.4;

export const pidPressure: Scenario = {
  name: "pid-pressure",
  description: `fork bomb in a pod (podPidsLimit ${PIDS_LIMIT}) under a hard pid.available threshold → that pod evicted, others keep running`,
  async run(h: Harness) {
    await h.useSharedContainerd();
    h.addPod("steady", { command: ["sh", "-c", "exec sleep 2147483647"], requests: { cpu: "50m", memory: "64Mi" }, limits: { cpu: "50m", memory: "64Mi" } });
    h.addPod("worker", { command: ["sh", "-c", "exec sleep 2147483647"], requests: { memory: "16Mi" } });
    const maxPid = hostMaxPid();
    const baseline = hostTaskCount();
    // pid.available = maxpid − tasks: met when tasks > baseline + MARGIN.
    const threshold = maxPid - baseline - MARGIN;
    h.say(`maxpid ${maxPid}, ${baseline} tasks before start → pid.available<${threshold} (crossed at ${baseline + MARGIN} tasks)`);
    await h.start({
      allocatableBytes: 1024 * MIB,
      config: {
        podPidsLimit: PIDS_LIMIT,
        evictionHard: { "pid.available": String(threshold), "memory.available": "100Mi" },
      },
    });
    const before = new Map([
      ["steady", containerFingerprint(await h.pod("steady"))],
      ["worker", containerFingerprint(await h.pod("worker"))],
    ]);
    // The bomb: background sleeps as fast as a shell forks, until pids.max refuses more. ash exits on
    // "can't fork", so the bomb runs in a child shell; the container's init then holds the orphans.
    h.addPod("forkbomb", { command: ["sh", "-c", "sh -c 'while :; do sleep 3600 & done' 2>/dev/null; exec sleep 2147483647"] });
    const running = await h.waitRunning(["forkbomb"]);
    const uid = running.get("forkbomb")!.metadata.uid!;
    const pidsDir = h.podCgroupDir("pids", uid, "BestEffort");
    let peakPids = 0;
    let pidsMax = "";
    await h.waitFor(
      "the fork bomb pod to be evicted",
      async () => {
        peakPids = Math.max(peakPids, Number(readCgroupFile(pidsDir, "pids.current") ?? 0));
        pidsMax ||= readCgroupFile(pidsDir, "pids.max")?.trim() ?? "";
        return isEvicted(await h.pod("forkbomb"));
      },
      30_000,
      50,
    );
    const rec = await h.waitFor("the eviction trace record", () => h.trace()[0], 15_000);
    h.say(`fork bomb evicted; peak ${peakPids} tasks in its pids cgroup`);
    h.check(
      "the bomb was fenced by podPidsLimit",
      peakPids > 0 && peakPids <= PIDS_LIMIT && pidsMax === String(PIDS_LIMIT),
      `peak pids.current=${peakPids}, pod pids.max=${pidsMax}`,
    );
    h.check(
      "exactly one eviction, of the fork bomb, for pid.available",
      h.trace().length === 1 && rec.pod === `default/${h.podName("forkbomb")}` && rec.signal === "pid.available",
      `${h
        .trace()
        .map((r) => `${r.pod}:${r.signal}`)
        .join(",")} observed=${rec.observed} threshold=${rec.threshold}`,
    );
    h.check("the bomb was ranked first", rec.ranked[0]?.pod === `default/${h.podName("forkbomb")}`, rec.ranked.map((r) => `${r.pod}(${r.usage})`).join(","));
    h.check("PIDPressure reported", rec.nodeConditions.includes("PIDPressure"), `[${rec.nodeConditions.join(",")}]`);
    for (const [name, fp] of before) {
      const p = await h.pod(name);
      h.check(`${name} kept running`, isRunning(p) && containerFingerprint(p) === fp, containerFingerprint(p));
    }
  },
};

if (import.meta.main) await cli(pidPressure);
