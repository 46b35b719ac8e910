// vs-kubelet.ts figure 5: the memory ramp of reaction.ts (lib/memory-ramp.ts) against each agent —
// the kubelet with kernelMemcgNotification on, then off, then bunlet (notification on, its default) —
// each node joined in turn to one real control plane (test/support/upstream): the kubelet treats every
// static pod as critical and never evicts one ("cannot evict a critical pod"), so the ramp pod is an API
// pod, bound to the node by spec.nodeName, the same for both agents. Each node: node allocatable 1 GiB
// (systemReserved the rest, enforced on kubepods), evictionHard memory.available 300Mi (both agents add
// allocatableMemory.available from it), the cgroup root fenced 128 MiB above (memoryPressureNode()).
// A run: MemoryPressure cleared (a pod the agent still refuses at admission is made again); the bench
// arms its threshold on kubepods; the pod is created; crossing → victim got SIGTERM (memhog's CRI log
// line); the kernel OOM kills of kubepods (memory.oom_control) over the run, so a run the OOM killer
// ended is counted, not hidden; each agent's own "decided" and "sent":
// bunlet's --eviction-trace (decision, stopSignalSent), the kubelet's log at -v=3 ("Eviction manager:
// attempting to reclaim", "Killing container with a grace period override", right before the CRI
// StopContainer that makes containerd send SIGTERM).
import { readFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { preciseNow } from "../../../src/clock.ts";
import { createNotifierHub, type NotifierHub } from "../../../src/kernel/index.ts";
import {
  type ControlPlane,
  joinUpstream,
  memoryPressureNode,
  startControlPlane,
  type UpstreamNode,
  waitNodeReady,
} from "../../../test/support/upstream/index.ts";
import { until } from "../../../test/support/wait.ts";
import { hostOomKills, MIB, readCgroupFile, traceTimeMs, type TraceRecord } from "../../chaos/lib.ts";
import { memoryLimitCounters } from "../../chaos/lib/cgroups.ts";
import { ALLOCATABLE, crossingUsage, observeThreshold, RAMP, THRESHOLD, victimReceived } from "./memory-ramp.ts";
import { percentile } from "./scratch-node.ts";

export type RampMode = "kubelet-notify" | "kubelet-periodic" | "bunlet";
export const RAMP_MODES: RampMode[] = ["kubelet-notify", "kubelet-periodic", "bunlet"];

export interface RampRun {
  /** The bench's threshold on kubepods crossed upwards (bunlet: or its own, whichever first), ms wall clock. */
  crossedAt: number;
  /** Crossing → the victim's SIGTERM handler ran, ms. */
  receivedMs?: number;
  noSigterm?: string;
  /** Crossing → the agent's own "decided" and "signal sent" (see the header), ms. */
  decidedMs?: number;
  sentMs?: number;
  /** Kernel OOM kills in kubepods during the run, and on the whole host (/proc/vmstat, other work included). */
  oomKills: number;
  hostOomKills: number;
}

export interface RampSeries {
  runs: RampRun[];
  errors: string[];
  /** Attempts whose pod the agent refused at admission under MemoryPressure (made again). */
  refused?: number;
}

const NODE_SETTINGS = { allocatableMiB: ALLOCATABLE / MIB, thresholdMiB: THRESHOLD / MIB, transitionS: 1 };

/** The ramp pod `name` bound to `node`: memhog to `ramp.totalMiB` at `ramp.mibPerSec` (0: as fast as it can). */
export function rampPod(name: string, node: string, image: string, ramp: { totalMiB: number; mibPerSec: number } = RAMP): string {
  return `apiVersion: v1
kind: Pod
metadata: { name: ${name}, namespace: default }
spec:
  nodeName: ${node}
  hostNetwork: true
  restartPolicy: Never
  terminationGracePeriodSeconds: 0
  containers:
    - name: main
      image: ${image}
      imagePullPolicy: IfNotPresent
      args: ["${ramp.totalMiB}", "${ramp.mibPerSec}"]
`;
}

/** klog's "I1206 16:20:01.123456 …" (local time, no year) → ms wall clock. */
export function klogTimeMs(line: string, year = new Date().getFullYear()): number | undefined {
  const m = /^[IWEF](\d\d)(\d\d) (\d\d):(\d\d):(\d\d)\.(\d{6})/.exec(line);
  if (!m) return undefined;
  const [mo, d, h, mi, s, us] = m.slice(1).map(Number) as [number, number, number, number, number, number];
  return new Date(year, mo - 1, d, h, mi, s).getTime() + us / 1000;
}

/** The first kubelet log line at or after `after` matching `re`, its time. */
function kubeletLogTime(stderr: string, re: RegExp, after: number): number | undefined {
  for (const line of stderr.split("\n")) {
    if (!re.test(line)) continue;
    const t = klogTimeMs(line);
    if (t !== undefined && t >= after - 1) return t;
  }
  return undefined;
}

/** The agent's own "decided" and "sent" for pod `name` (see the header), ms wall clock. */
export function ownTimes(mode: RampMode, n: UpstreamNode, name: string, since: number): { decided?: number; sent?: number; crossed?: number } {
  if (mode !== "bunlet") {
    const log = n.proc.stderr();
    const pod = new RegExp(`pod="default/${name}"`);
    return {
      decided: kubeletLogTime(log, /Eviction manager: attempting to reclaim/, since),
      sent: kubeletLogTime(log, new RegExp(`Killing container with a grace period override.*${pod.source}`), since),
    };
  }
  const file = join(n.base, "eviction-trace.jsonl");
  const lines = existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean) : [];
  const rec = lines.map((l) => JSON.parse(l) as TraceRecord).find((r) => r.pod.endsWith(`/${name}`));
  const t = (k: string) => (rec && Number.isFinite(traceTimeMs(rec.timestamps[k])) ? traceTimeMs(rec.timestamps[k]) : undefined);
  return { decided: t("decision"), sent: t("stopSignalSent"), crossed: t("thresholdCrossed") };
}

/**
 * MemoryPressure False in the Node's status, and changed since `since` (ms wall clock, the previous run's
 * start): the agent posts a change up to nodeStatusUpdateFrequency (1 s) late, and a pod created while it
 * still feels the pressure is refused at admission. After 30 s, False alone will do (a run that never
 * brought the node under pressure).
 */
export async function pressureCleared(cp: ControlPlane, node: string, since: number | undefined): Promise<void> {
  const jsonpath = 'jsonpath={range .status.conditions[?(@.type=="MemoryPressure")]}{.status} {.lastTransitionTime}{end}';
  await until(
    "MemoryPressure False",
    async () => {
      const [status, at] = (await cp.kubectl("get", "node", node, "-o", jsonpath)).trim().split(" ");
      if (status !== "False") return false;
      return since === undefined || Date.parse(at ?? "") >= Math.floor(since / 1000) * 1000 || Date.now() - since > 30_000;
    },
    120_000,
    { intervalMs: 500 },
  );
}

/** The first crossing seen, by the bench's own observer (`bench`) or by the agent's own account, within timeoutMs. */
export function firstCrossing(
  mode: RampMode,
  n: UpstreamNode,
  name: string,
  since: number,
  bench: () => number | undefined,
  timeoutMs: number,
  intervalMs: number,
): Promise<number> {
  return until(
    `${name} to cross the threshold`,
    () => {
      const own = ownTimes(mode, n, name, since).crossed;
      const seen = bench();
      return seen === undefined && own === undefined ? undefined : Math.min(seen ?? Infinity, own ?? Infinity);
    },
    timeoutMs,
    { intervalMs },
  );
}

/** Once the victim got its signal (or timeoutMs passed): the run's times from its first crossing, and its OOM kills. */
export async function rampResult(
  n: UpstreamNode,
  mode: RampMode,
  name: string,
  since: number,
  crossedAt: number,
  bench: () => number | undefined,
  timeoutMs: number,
  kills: () => { oomKills: number; hostOomKills: number },
): Promise<RampRun> {
  const got = await victimReceived(n.ctd.cri, join(n.base, "logs"), name, timeoutMs);
  await Bun.sleep(200);
  // bunlet appends its trace record once memory is back below the threshold, seconds later on a slow node.
  const traced = () => {
    const o = ownTimes(mode, n, name, since);
    return o.decided !== undefined ? o : undefined;
  };
  const own =
    mode === "bunlet"
      ? await until("bunlet's trace record", traced, 20_000, { intervalMs: 100 }).catch(() => ownTimes(mode, n, name, since))
      : ownTimes(mode, n, name, since);
  const first = Math.min(crossedAt, bench() ?? Infinity, own.crossed ?? Infinity);
  const ms = (t: number | undefined) => (t === undefined ? undefined : t - first);
  return { crossedAt: first, receivedMs: ms(got.receivedAt), noSigterm: got.noSigterm, decidedMs: ms(own.decided), sentMs: ms(own.sent), ...kills() };
}

/** One ramp on node `n`: see the header. */
async function oneRamp(cp: ControlPlane, n: UpstreamNode, hub: NotifierHub, mode: RampMode, name: string, previous?: number): Promise<RampRun> {
  const kubepods = join("/sys/fs/cgroup/memory", n.cgroupRoot, "kubepods");
  await pressureCleared(cp, n.node, previous);
  // The 10 s loop is phase-locked to the previous run's eviction: start at a random phase.
  if (mode === "kubelet-periodic") await Bun.sleep(Math.random() * 10_000);
  const obs = await observeThreshold(hub, kubepods, crossingUsage(kubepods));
  const oom0 = memoryLimitCounters(1, kubepods).oomKills;
  const host0 = hostOomKills();
  const since = preciseNow();
  try {
    await cp.kubectlIn(rampPod(name, n.node, n.ctd.images.memhog), "apply", "-f", "-");
    // bunlet arms its own line from its own inactive_file reading: it can fire first, and a victim
    // stopped that fast never lets usage reach the bench's line at all (reaction.ts does the same).
    const crossedAt = await firstCrossing(mode, n, name, since, obs.crossed, 20_000, 5).catch(async (e: Error) => {
      const status = await cp.kubectl("get", "pod", name, "-o", "jsonpath={.status.phase} {.status.reason}: {.status.message}").catch(() => "?");
      throw new Error(`${e.message} (the pod: ${status})`);
    });
    return await rampResult(n, mode, name, since, crossedAt, obs.crossed, 40_000, () => ({
      oomKills: memoryLimitCounters(1, kubepods).oomKills - oom0,
      hostOomKills: hostOomKills() - host0,
    }));
  } finally {
    obs.stop();
    await cp.kubectl("delete", "pod", name, "--grace-period=0", "--force", "--ignore-not-found", "--wait=false").catch(() => "");
  }
}

const usage = (kubepods: string) => Number(readCgroupFile(kubepods, "memory.usage_in_bytes") ?? 0);

/** How a series runs one ramp, waits for the pods' cgroup to empty after it, and adds to its line. */
export interface RampSteps {
  ramp(name: string, previous?: number): Promise<RampRun>;
  emptied(): Promise<unknown>;
  detail?(r: RampRun): string;
}

/**
 * One untimed ramp first, as figure 3's untimed pod (the image's first start on the node, and the agent's
 * first eviction), then `runs` timed ones into `series`. A pod the agent refused at admission (it still
 * felt the previous run's pressure) never ran: that attempt is counted as refused and made again, up to
 * twice the runs in all.
 */
export async function timedRamps(series: RampSeries, mode: RampMode, runs: number, say: (s: string) => void, steps: RampSteps): Promise<void> {
  let previous = preciseNow();
  await steps.ramp("ramp-warmup").catch((e: Error) => say(`${mode} untimed ramp: ${e.message.split("\n")[0]}`));
  for (let attempt = 0; series.runs.length + series.errors.length < runs && attempt < runs * 2; attempt++) {
    const start = preciseNow();
    const i = series.runs.length + series.errors.length;
    try {
      const r = await steps.ramp(`ramp-${attempt}`, previous);
      series.runs.push(r);
      const f = (x: number | undefined) => (x === undefined ? "-" : `${x.toFixed(1)} ms`);
      say(
        `${mode} ramp ${i + 1}: crossing → victim got SIGTERM ${f(r.receivedMs)}${r.noSigterm ? ` (${r.noSigterm})` : ""}, decided ${f(r.decidedMs)}, sent ${f(r.sentMs)}, OOM kills ${r.oomKills}${steps.detail?.(r) ?? ""}`,
      );
    } catch (e) {
      const message = `${mode}, figure 5, run ${i + 1}: ${(e as Error).message.split("\n")[0]}`;
      if (/node had condition/.test(message)) series.refused = (series.refused ?? 0) + 1;
      else series.errors.push(message);
      say(message);
    }
    previous = start;
    await steps.emptied().catch(() => {});
  }
}

/** Figure 5 of one mode: a node joined, `runs` ramps, the node stopped. */
async function rampSeries(cp: ControlPlane, hub: NotifierHub, mode: RampMode, binary: string, runs: number, say: (s: string) => void): Promise<RampSeries> {
  const series: RampSeries = { runs: [], errors: [] };
  const agent = mode === "bunlet" ? "bunlet" : "kubelet";
  const settings = memoryPressureNode({ ...NODE_SETTINGS, kernelMemcgNotification: mode !== "kubelet-periodic" });
  const name = `vsk-ramp-${mode}`;
  const flags = agent === "kubelet" ? ["--v=3"] : [`--eviction-trace=${join(`/tmp/bunlet-${name}-${process.pid}`, "eviction-trace.jsonl")}`];
  const n = await joinUpstream({ name, cp, agent, binary, flags, ...settings });
  try {
    await waitNodeReady(cp, n);
    await timedRamps(series, mode, runs, say, {
      ramp: (name, previous) => oneRamp(cp, n, hub, mode, name, previous),
      emptied: () => until("kubepods emptied", () => usage(join("/sys/fs/cgroup/memory", n.cgroupRoot, "kubepods")) < 200 * MIB, 60_000, { intervalMs: 100 }),
      detail: (r) => ` (host ${r.hostOomKills})`,
    });
  } finally {
    await n.stop().catch((e) => say(`${mode} node cleanup: ${e}`));
  }
  return series;
}

/** What figure 5 runs: the upstream binaries' directory (`binDir`), the two agents, runs per mode. */
export interface RampFigureOptions {
  binDir: string;
  bunlet: string;
  kubelet: string;
  runs: number;
  say: (s: string) => void;
}

/** Every mode's series on one control plane; a series that fails is kept as its error. */
export async function everyRampMode(
  o: RampFigureOptions,
  series: (mode: RampMode, binary: string) => Promise<RampSeries>,
): Promise<Record<RampMode, RampSeries>> {
  const out = {} as Record<RampMode, RampSeries>;
  for (const mode of RAMP_MODES)
    out[mode] = await series(mode, mode === "bunlet" ? o.bunlet : o.kubelet).catch((e: Error) => ({
      runs: [],
      errors: [`${mode}, figure 5: ${e.message.split("\n")[0]}`],
    }));
  return out;
}

/** Figure 5, every mode, on one control plane (`binDir`: kube-apiserver, kube-controller-manager, kube-scheduler, kubectl). */
export async function rampFigure(o: RampFigureOptions): Promise<Record<RampMode, RampSeries>> {
  const cp = await startControlPlane({ dir: `/tmp/bunlet-bench-vsk-ramp-${process.pid}`, binDir: o.binDir });
  const hub = createNotifierHub();
  try {
    return await everyRampMode(o, (mode, binary) => rampSeries(cp, hub, mode, binary, o.runs, o.say));
  } finally {
    await hub.close();
    await cp.stop().catch((e) => o.say(`control plane cleanup: ${e}`));
  }
}

/** One line a mode: runs, those whose victim got SIGTERM, OOM kills, and the agent's own decided / sent p50 and p99. */
export function rampSummary(series: Partial<Record<RampMode, RampSeries>>): string[] {
  const pp = (xs: (number | undefined)[]) => {
    const v = xs.filter((x): x is number => x !== undefined);
    return v.length ? `p50 ${percentile(v, 50).toFixed(1)} ms, p99 ${percentile(v, 99).toFixed(1)} ms (${v.length})` : "—";
  };
  return RAMP_MODES.flatMap((mode) => {
    const s = series[mode];
    if (!s) return [];
    const got = s.runs.filter((r) => r.receivedMs !== undefined).length;
    const oom = s.runs.reduce((n, r) => n + r.oomKills, 0);
    const host = s.runs.reduce((n, r) => n + r.hostOomKills, 0);
    const without = s.runs.filter((r) => r.noSigterm).map((r) => r.noSigterm);
    return [
      `figure 5, ${mode}: ${s.runs.length} runs, ${got} with SIGTERM, ${s.errors.length} failed, ${s.refused ?? 0} refused at admission and made again; kernel OOM kills in kubepods ${oom} (host-wide ${host}); ` +
        `crossing → the agent decided ${pp(s.runs.map((r) => r.decidedMs))}, signal sent ${pp(s.runs.map((r) => r.sentMs))}${without.length ? `; ${without.join("; ")}` : ""}`,
    ];
  });
}
