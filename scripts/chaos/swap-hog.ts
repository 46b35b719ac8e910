// Scenario (i): NodeSwap with memorySwap.swapBehavior LimitedSwap on cgroup v2. A Burstable hog
// (request 96Mi, limit 192Mi) allocates 64 MiB past its limit: its container's memory.max pushes that
// into swap, within its share of the node's swap (upstream's request ÷ MemTotal × SwapTotal). Its memory
// and swap together are past the line of the hard memory.available threshold, its RAM is not, and
// nothing is evicted: as upstream, the signal is RAM only (working set, memory.current − inactive_file;
// swap is not counted). Then a Guaranteed pod allocates within its request and the node crosses the
// line: the hog — above its request — is evicted with upstream's message, the Guaranteed pod keeps its
// container, and MemoryPressure clears after the transition period. API pods from the API-server
// double (./lib/api-pods.ts): static pods are critical and never get swap.
// Needs cgroup v2 and swap: on in the host already, or /dev/ubda in the v2 guest (test/integration/v2/
// chaos.test.ts gives it one), made swap and turned on for this scenario only.
//   bun scripts/chaos/swap-hog.ts
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { type ApiPods, useApiPods } from "./lib/api-pods.ts";
import { cli, containerFingerprint, isEvicted, MIB, memTotalBytes, readCgroupFile, type Harness, type Scenario } from "./lib.ts";

const SWAP_DEVICE = "/dev/ubda";
const ALLOCATABLE = 512 * MIB;
const THRESHOLD_MIB = 288; // crossed at 224 MiB of pods' working set: above the hog's limit, below its limit + swap
const TRANSITION_S = 3;
// The requests fit what admission offers: allocatable less the hard threshold (512 − 288 = 224 MiB).
const HOG = { requestMiB: 96, limitMiB: 192, allocMiB: 256 };
const GUARANTEED = { requestMiB: 96, allocMiB: 64 };
const RATE_MIB_S = "20";

const swapTotalBytes = () => Number(/^SwapTotal:\s+(\d+) kB/m.exec(readFileSync("/proc/meminfo", "utf8"))?.[1] ?? 0) * 1024;
const mib = (bytes: number) => `${(bytes / MIB).toFixed(1)} MiB`;
/** The kernel keeps whole pages of what bunlet asks for. */
const pages = (bytes: number) => Math.floor(bytes / 4096) * 4096;

/** Why the scenario cannot run here: no cgroup v2, or no swap and no guest disk to make it on. */
function unavailable(): string | undefined {
  if (!existsSync("/sys/fs/cgroup/cgroup.controllers")) return "needs cgroup v2 (it runs in the v2 guest: test/integration/v2/chaos.test.ts)";
  if (swapTotalBytes() > 0) return undefined;
  if (process.env.BUNLET_IN_V2_GUEST && existsSync(SWAP_DEVICE)) return undefined;
  return `needs swap: none is on, and ${SWAP_DEVICE} is made swap only in the v2 guest`;
}

/** Turns swap on the guest's disk on for this scenario (off at cleanup), unless swap is on already. */
function ensureSwap(h: Harness): void {
  if (swapTotalBytes() > 0) return;
  const sh = (cmd: string) => {
    const r = Bun.spawnSync(["sh", "-c", cmd], { stdout: "pipe", stderr: "pipe" });
    if (r.exitCode !== 0) throw new Error(`${cmd}: exit ${r.exitCode}: ${r.stderr.toString()}`);
  };
  sh(`mkswap ${SWAP_DEVICE} >/dev/null && swapon ${SWAP_DEVICE}`);
  h.defer(() => sh(`swapoff ${SWAP_DEVICE}`));
  h.say(`swap on ${SWAP_DEVICE}: ${mib(swapTotalBytes())}`);
}

/** The hog running with its share of swap: checks its container's memory.swap.max; returns its pod cgroup. */
async function startHog(h: Harness, api: ApiPods): Promise<string> {
  await api.addPod("hog", {
    image: h.images.memhog,
    args: [String(HOG.allocMiB), RATE_MIB_S],
    requests: { memory: `${HOG.requestMiB}Mi` },
    limits: { memory: `${HOG.limitMiB}Mi` },
  });
  const hog = (await h.waitRunning(["hog"])).get("hog")!;
  await h.checkPodMemoryStats(["hog"]);
  const podDir = h.podCgroupDir("memory", hog.metadata.uid!, "Burstable");
  const id = hog.status!.containerStatuses![0]!.containerID!.replace(/^\w+:\/\//, "");
  const ctr = readdirSync(podDir).find((d) => d.includes(id));
  const share = pages(Math.floor(((HOG.requestMiB * MIB) / memTotalBytes()) * swapTotalBytes()));
  const swapMax = ctr ? readCgroupFile(join(podDir, ctr), "memory.swap.max")?.trim() : undefined;
  h.check(
    "the hog's container may swap its share (request ÷ MemTotal × SwapTotal)",
    swapMax === String(share) && share > (HOG.allocMiB - HOG.limitMiB + 8) * MIB,
    `memory.swap.max=${swapMax ?? "(no container cgroup)"} want ${share} (${mib(share)})`,
  );
  h.say(`hog running: ${HOG.allocMiB} MiB at ${RATE_MIB_S} MiB/s against its ${HOG.limitMiB}Mi limit`);
  return podDir;
}

export const swapHog: Scenario = {
  name: "swap-hog",
  description:
    "LimitedSwap: a Burstable hog swaps past its limit (its share of swap; swap not counted in memory.available), then a Guaranteed pod allocates within its request → the node crosses, the hog is evicted, the Guaranteed pod kept; MemoryPressure set, then cleared",
  timeoutMs: 120_000,
  unavailable,
  async run(h: Harness) {
    await h.useSharedContainerd();
    ensureSwap(h);
    const api = await useApiPods(h);
    await h.start({
      allocatableBytes: ALLOCATABLE,
      extraArgs: api.kubeconfigArgs,
      waitRunning: [],
      config: {
        failSwapOn: false,
        memorySwap: { swapBehavior: "LimitedSwap" },
        evictionHard: { "memory.available": `${THRESHOLD_MIB}Mi` },
        evictionPressureTransitionPeriod: `${TRANSITION_S}s`,
      },
    });
    await h.waitNotifierArmed("hard");
    const hogDir = await startHog(h, api);
    let peakSwap = 0;
    const sampleSwap = () => {
      peakSwap = Math.max(peakSwap, Number(readCgroupFile(hogDir, "memory.swap.current") ?? 0));
      return peakSwap;
    };
    // Held once swap carries all but 16 MiB of what is past the limit: memory + swap is then past the line.
    const line = ALLOCATABLE - THRESHOLD_MIB * MIB;
    const kubepods = h.cgroupDir("memory", "kubepods");
    await h.waitFor("the hog to swap", () => sampleSwap() >= (HOG.allocMiB - HOG.limitMiB - 16) * MIB, 60_000, 100);
    const before = await h.debugEviction();
    const ram = h.workingSet(kubepods);
    h.check(
      "memory + swap past the line, RAM not: no eviction, no MemoryPressure (swap is not counted)",
      ram < line && ram + peakSwap > line && h.trace().length === 0 && !(before.nodeConditions as string[]).includes("MemoryPressure"),
      `kubepods working set ${mib(ram)} + hog swap ${mib(peakSwap)}, line ${mib(line)}, conditions [${(before.nodeConditions as string[]).join(",")}]`,
    );

    await api.addPod("guaranteed", {
      image: h.images.memhog,
      args: [String(GUARANTEED.allocMiB), RATE_MIB_S],
      requests: { cpu: "100m", memory: `${GUARANTEED.requestMiB}Mi` },
      limits: { cpu: "100m", memory: `${GUARANTEED.requestMiB}Mi` },
    });
    const kept = containerFingerprint((await h.waitRunning(["guaranteed"])).get("guaranteed"));
    h.say(`guaranteed running: ${GUARANTEED.allocMiB} MiB of its ${GUARANTEED.requestMiB}Mi request; the node crosses at ${mib(line)}`);
    await h.waitRamp("the pods to near the threshold", kubepods, line - 8 * MIB, {
      done: () => (sampleSwap(), h.trace()[0]),
      intervalMs: 100,
    });
    await verifyEviction(h, api, kept, sampleSwap);
  },
};

/** The hog evicted (not the Guaranteed pod) with upstream's message; MemoryPressure set, then cleared. */
async function verifyEviction(h: Harness, api: ApiPods, kept: string, sampleSwap: () => number): Promise<void> {
  let pressureSeen = false;
  let evictedAt = 0;
  await h.waitFor(
    "the hog to be evicted",
    async () => {
      sampleSwap();
      const dbg = await h.debugEviction().catch(() => undefined);
      pressureSeen ||= (dbg?.nodeConditions as string[] | undefined)?.includes("MemoryPressure") ?? false;
      if (isEvicted(await h.pod("hog"))) evictedAt = Date.now();
      return evictedAt;
    },
    30_000,
  );
  const rec = await h.waitFor("the eviction trace record", () => h.trace()[0], 15_000);
  const swapped = sampleSwap();
  h.check("the hog used swap (memory.swap.current > 0)", swapped > 0, `peak ${mib(swapped)} in its pod cgroup`);
  h.check("MemoryPressure was set", pressureSeen || rec.nodeConditions.includes("MemoryPressure"), `[${rec.nodeConditions.join(",")}]`);
  const trace = h.trace();
  h.check(
    "exactly one eviction, of the hog, for memory",
    trace.length === 1 && rec.pod === `default/${h.podName("hog")}` && /^(allocatableM|m)emory\.available$/.test(rec.signal),
    `${trace.map((r) => `${r.pod}:${r.signal}`).join(",")} observed=${rec.observed} threshold=${rec.threshold}`,
  );
  h.check("the hog was ranked first", rec.ranked[0]?.pod === `default/${h.podName("hog")}`, rec.ranked.map((r) => `${r.pod}(${mib(r.usage)})`).join(","));
  const hog = await api.apiPod("hog");
  const upstreamMessage = new RegExp(
    `^The node was low on resource: memory\\. Threshold quantity: \\S+, available: \\S+\\. Container main was using \\S+, request is ${HOG.requestMiB}Mi, has larger consumption of memory\\. ?$`,
  );
  h.check(
    "the API pod says Evicted with upstream's message",
    hog?.status?.phase === "Failed" && hog.status.reason === "Evicted" && upstreamMessage.test(hog.status.message ?? ""),
    `phase=${hog?.status?.phase} reason=${hog?.status?.reason} message=${JSON.stringify(hog?.status?.message)}`,
  );
  const g = await h.pod("guaranteed");
  const restarts = g?.status?.containerStatuses?.[0]?.restartCount;
  h.check(
    "the Guaranteed pod kept running (same container, 0 restarts)",
    g?.status?.phase === "Running" && containerFingerprint(g) === kept && restarts === 0,
    `${g?.status?.phase} ${containerFingerprint(g)}`,
  );
  let clearedAt = 0;
  await h.waitFor(
    "MemoryPressure to clear",
    async () => {
      if (!((await h.debugEviction()).nodeConditions as string[]).includes("MemoryPressure")) clearedAt = Date.now();
      return clearedAt;
    },
    25_000,
    100,
  );
  const heldS = (clearedAt - evictedAt) / 1000;
  h.check(
    `MemoryPressure cleared after the ${TRANSITION_S}s transition period`,
    heldS >= TRANSITION_S - 0.5,
    `cleared ${heldS.toFixed(1)} s after the eviction`,
  );
  const l = rec.latencyMs;
  h.note(
    `hog swapped ${mib(swapped)} (its limit ${HOG.limitMiB}Mi, ${HOG.allocMiB} MiB allocated); from the crossing (trigger ${rec.trigger.kind}): decision ${l.decision?.toFixed(1) ?? "-"} ms, stop signal ${l.stopSignalSent?.toFixed(1) ?? "-"} ms, hog exited ${l.containerExited?.toFixed(1) ?? "-"} ms`,
  );
}

if (import.meta.main) await cli(swapHog);
