// What vs-kubelet.ts measures of one agent on a scratch node, the same way for bunlet and the kubelet:
// idle cost from /proc, pod starts from the containers' own marker files (lib/markers.ts), re-adoption
// after a restart from the agent's /pods and the CRI.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { POD_NAME_LABEL } from "../../../src/pod/kuberuntime/labels.ts";
import { pollUntil } from "../../../test/support/wait.ts";
import { directBurst, markerManifest, markerTime, runningContainers, waitMarkedRunning } from "./markers.ts";
import { cpuSeconds, rssPssMb, voluntarySwitchesByThread } from "./proc.ts";
import { createScratchNode, type ScratchNode } from "./scratch-node.ts";

export interface IdleFigures {
  /** utime+stime over the window, % of one core. */
  cpuPct: number;
  /** Window maxima, sampled every second (smaps_rollup). */
  rssMb: number;
  pssMb: number;
  /** Voluntary context switches of all threads, per second. */
  wakeupsPerS: number;
  threads: number;
}

/** Waits `settleS`, then measures the agent's own cost over `windowS`. */
export async function measureIdle(pid: number, windowS: number, settleS: number): Promise<IdleFigures> {
  await Bun.sleep(settleS * 1000);
  const sw0 = voluntarySwitchesByThread(pid);
  const c0 = cpuSeconds(pid);
  const t0 = performance.now();
  let rssMb = 0;
  let pssMb = 0;
  while (performance.now() - t0 < windowS * 1000) {
    await Bun.sleep(Math.min(1000, Math.max(0, windowS * 1000 - (performance.now() - t0))));
    const m = rssPssMb(pid);
    rssMb = Math.max(rssMb, m.rss);
    pssMb = Math.max(pssMb, m.pss);
  }
  const c1 = cpuSeconds(pid);
  const sw1 = voluntarySwitchesByThread(pid);
  const wall = (performance.now() - t0) / 1000;
  let switches = 0;
  for (const [tid, n] of sw1) switches += n - (sw0.get(tid) ?? 0);
  return { cpuPct: ((c1 - c0) / wall) * 100, rssMb, pssMb, wakeupsPerS: switches / wall, threads: sw1.size };
}

export interface Burst {
  /** Manifests renamed in → first and last container process start, ms. */
  firstMs: number;
  allMs: number;
  /** The agent's own CPU time (utime+stime) from the drop until the last container ran, ms. */
  agentCpuMs?: number;
}

/** Drops `pods` marker manifests (b<i>) at once and times the first and the last container running. */
export async function manifestBurst(sn: ScratchNode, pods: number): Promise<Burst> {
  const markers = join(sn.base, "markers-burst");
  mkdirSync(markers, { recursive: true });
  const names = Array.from({ length: pods }, (_, i) => `b${i}`);
  const drop = sn.stageManifests(Object.fromEntries(names.map((n) => [n, markerManifest(n, markers)])));
  const pid = sn.agent!.pid;
  const c0 = cpuSeconds(pid);
  const t0Epoch = Date.now();
  drop();
  let c1 = c0;
  const marked = await waitMarkedRunning({ cri: sn.ctd.cri, node: sn.node, markers, pods, t0Epoch, onAll: () => (c1 = cpuSeconds(pid)) });
  return { ...marked, agentCpuMs: (c1 - c0) * 1000 };
}

/** One marker manifest `name` dropped → its container running, ms (the marker directory read every 5 ms). */
export async function onePodStart(sn: ScratchNode, name: string): Promise<number> {
  const markers = join(sn.base, `markers-${name}`);
  mkdirSync(markers, { recursive: true });
  const drop = sn.stageManifests({ [name]: markerManifest(name, markers) });
  const t0Epoch = Date.now();
  drop();
  await pollUntil(() => markerTime(markers, name) !== undefined, `${name} running (marker)`, 60_000, 5);
  return markerTime(markers, name)! - t0Epoch;
}

export interface Readoption {
  /** Agent spawned → its /pods reports every pod's containers running with their old IDs, ms. */
  ms: number;
  /** The node's containers after, by the CRI, are those running before: none new, none gone. */
  sameContainers: boolean;
  containersBefore: number;
  containersAfter: number;
}

/** The IDs of a /pods answer's containers that are running, without the runtime's scheme. */
function reportedRunning(podList: { items?: { status?: { containerStatuses?: { containerID?: string; state?: { running?: unknown } }[] } }[] }): string[][] {
  return (podList.items ?? []).map((p) =>
    (p.status?.containerStatuses ?? []).filter((c) => c.state?.running && c.containerID).map((c) => c.containerID!.replace(/^[a-z]+:\/\//, "")),
  );
}

/** Stops the agent and starts it again on its `pods` running pods; times the re-adoption (/pods read every 200 ms). */
export async function restartReadoption(sn: ScratchNode, pods: number): Promise<Readoption> {
  const cri = sn.ctd.cri;
  const before = new Set(await runningContainers(cri, sn.node));
  await sn.stopAgent();
  const t0 = performance.now();
  await sn.startAgent();
  let ms = Number.NaN;
  await pollUntil(
    async () => {
      const r = await sn.get("/pods");
      const adopted = reportedRunning(await r.json()).filter((ids) => ids.length > 0 && ids.every((id) => before.has(id))).length;
      if (adopted < pods) return false;
      ms = performance.now() - t0;
      return true;
    },
    `${pods} pods re-adopted (/pods)`,
    300_000,
    200,
  );
  const after = (await cri.listContainers()).filter((c) => c.labels?.[POD_NAME_LABEL]?.endsWith(`-${sn.node}`)).map((c) => c.id);
  const same = after.length === before.size && after.every((id) => before.has(id));
  return { ms, sameContainers: same, containersBefore: before.size, containersAfter: after.length };
}

/** The bare-CRI floor: all 100 running, ms, by concurrency. */
export type Floor = Record<number, { firstMs: number; allMs: number }>;

/**
 * The bare-CRI floor at one concurrency: `pods` marker pods by CRI calls on a fresh scratch node (with
 * the systemd driver: in the kubepods-besteffort slice), into `floor`; a failure goes to `errors`.
 */
export async function floorBurst(
  label: string,
  pods: number,
  concurrency: number,
  out: { floor: Floor; errors: string[]; say: (s: string) => void },
  systemd = false,
): Promise<void> {
  const sn = await createScratchNode(`${label}${concurrency}`, { build: false, systemd });
  try {
    const b = await directBurst({
      cri: sn.ctd.cri,
      base: sn.base,
      cgroupRoot: sn.cgroupRoot,
      node: sn.node,
      pods,
      concurrency,
      markers: join(sn.base, "markers"),
      cgroupParent: systemd ? (i) => `kubepods-besteffort-podfloor${i}.slice` : undefined,
    });
    out.floor[concurrency] = { firstMs: b.firstMs, allMs: b.allMs };
    out.say(`bare CRI, ${concurrency} at a time: first ${b.firstMs.toFixed(0)} ms, all ${b.allMs.toFixed(0)} ms`);
  } catch (e) {
    out.errors.push(`bare CRI, ${concurrency} at a time: ${(e as Error).message.split("\n")[0]}`);
    out.say(out.errors.at(-1)!);
  } finally {
    await sn.cleanup();
  }
}
