// Figure 5 inside the cgroup v2 guest (vs-kubelet-guest.ts): the ramp of ramp-figure.ts on cgroup v2 with
// the systemd driver — the kubelet with kernelMemcgNotification on, then off, then bunlet — each node joined
// in turn to one real control plane started in the guest (the kubelet never evicts a static pod), the ramp
// an API pod bound by spec.nodeName. Scaled to the guest (one CPU, UML page faults at tens of MiB/s):
// kubepods.slice limited to GUEST_RAMP.allocatableMiB, hard threshold memory.available
// GUEST_RAMP.thresholdMiB, memhog as fast as it can to GUEST_RAMP.totalMiB (under the limit: a victim
// nobody evicts waits, it does not meet the OOM killer). Measured the same way for every agent:
//   crossing  kubepods.slice's working set (memory.current − inactive_file) reaching allocatable −
//             threshold, by the bench's own 2 ms poll on its own thread (cgroup v2 has no memcg threshold
//             eventfd), or bunlet's traced crossing if earlier;
//   got       memhog's SIGTERM handler line in the container's CRI log (memory-ramp.ts victimReceived);
//   OOM kills memory.events oom_kill of kubepods.slice over the run.
// Upstream's memory threshold notifier is a disabled stub on cgroup v2 (NewCgroupNotifier,
// pkg/kubelet/eviction/threshold_notifier_linux.go): with notification on the kubelet still acts on its
// 10 s loop alone, which is what the guest's two kubelet series show.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { preciseNow } from "../../../src/clock.ts";
import { startWorkingSetWatch } from "../../../src/kernel/working-set-watch.ts";
import {
  type ControlPlane,
  joinUpstream,
  memoryPressureNode,
  startControlPlane,
  type UpstreamNode,
  waitNodeReady,
} from "../../../test/support/upstream/index.ts";
import { until } from "../../../test/support/wait.ts";
import {
  everyRampMode,
  firstCrossing,
  pressureCleared,
  rampResult,
  type RampFigureOptions,
  type RampMode,
  type RampRun,
  type RampSeries,
  rampPod,
  timedRamps,
} from "./ramp-figure.ts";

const MIB = 2 ** 20;
export const GUEST_RAMP = { allocatableMiB: 256, thresholdMiB: 100, totalMiB: 240, mibPerSec: 0 };
const KUBEPODS = "/sys/fs/cgroup/kubepods.slice";
const LINE = (GUEST_RAMP.allocatableMiB - GUEST_RAMP.thresholdMiB) * MIB;

const oomKills = () => Number(/^oom_kill (\d+)$/m.exec(readFileSync(join(KUBEPODS, "memory.events"), "utf8"))?.[1] ?? 0);
const workingSet = () => {
  const stat = readFileSync(join(KUBEPODS, "memory.stat"), "utf8");
  return Number(readFileSync(join(KUBEPODS, "memory.current"), "utf8")) - Number(/^inactive_file (\d+)$/m.exec(stat)?.[1] ?? 0);
};

/** The bench's crossing of the line on kubepods.slice: a 2 ms poll on its own thread. */
function observeLine() {
  let crossedAt: number | undefined;
  const w = startWorkingSetWatch({
    poll: { minIntervalMs: 2, maxIntervalMs: 2, statRefreshMs: 0, imminentHorizonMs: 0 },
    onCrossing: (c) => (crossedAt ??= c.atMs),
  });
  w.set([{ id: "kubepods", source: { cgroupDir: KUBEPODS }, lineBytes: LINE }]);
  return { crossed: () => crossedAt, stop: () => w.stop() };
}

/** One ramp on node `n`: see the header. */
async function oneRamp(cp: ControlPlane, n: UpstreamNode, mode: RampMode, name: string, previous?: number): Promise<RampRun> {
  await pressureCleared(cp, n.node, previous);
  // The 10 s loop is phase-locked to the previous run's eviction: start at a random phase.
  if (mode !== "bunlet") await Bun.sleep(Math.random() * 10_000);
  const obs = observeLine();
  const oom0 = oomKills();
  const since = preciseNow();
  try {
    await cp.kubectlIn(rampPod(name, n.node, n.ctd.images.memhog, GUEST_RAMP), "apply", "-f", "-");
    const crossedAt = await firstCrossing(mode, n, name, since, obs.crossed, 120_000, 20);
    return await rampResult(n, mode, name, since, crossedAt, obs.crossed, 60_000, () => ({ oomKills: oomKills() - oom0, hostOomKills: 0 }));
  } finally {
    await obs.stop();
    await cp.kubectl("delete", "pod", name, "--grace-period=0", "--force", "--ignore-not-found", "--wait=false").catch(() => "");
  }
}

/** One mode: a node joined (systemd driver), one untimed ramp, `runs` ramps, the node stopped. */
async function guestRampSeries(cp: ControlPlane, mode: RampMode, binary: string, runs: number, say: (s: string) => void): Promise<RampSeries> {
  const series: RampSeries = { runs: [], errors: [] };
  const agent = mode === "bunlet" ? "bunlet" : "kubelet";
  const name = `vskg-ramp-${mode}`;
  const settings = memoryPressureNode({ ...GUEST_RAMP, transitionS: 1, kernelMemcgNotification: mode !== "kubelet-periodic" });
  const flags = agent === "kubelet" ? ["--v=3"] : [`--eviction-trace=${join(`/tmp/bunlet-${name}-${process.pid}`, "eviction-trace.jsonl")}`];
  const n = await joinUpstream({ name, cp, agent, binary, flags, systemd: true, ...settings });
  try {
    await waitNodeReady(cp, n, 300_000);
    say(`${mode}: node Ready`);
    await timedRamps(series, mode, runs, say, {
      ramp: (name, previous) => oneRamp(cp, n, mode, name, previous),
      emptied: () => until("kubepods emptied", () => workingSet() < 32 * MIB, 60_000, { intervalMs: 100 }),
    });
  } finally {
    await n.stop().catch((e) => say(`${mode} node cleanup: ${e}`));
  }
  return series;
}

/** Figure 5 in the guest, every mode, on one control plane started here (`binDir`: the upstream binaries). */
export async function guestRampFigure(o: RampFigureOptions): Promise<Record<RampMode, RampSeries>> {
  const t0 = preciseNow();
  const cp = await startControlPlane({ dir: `/tmp/bunlet-bench-vskg-ramp-${process.pid}`, binDir: o.binDir });
  o.say(`control plane up in ${((preciseNow() - t0) / 1000).toFixed(1)} s`);
  try {
    return await everyRampMode(o, (mode, binary) => guestRampSeries(cp, mode, binary, o.runs, o.say));
  } finally {
    await cp.stop().catch((e) => o.say(`control plane cleanup: ${e}`));
  }
}
