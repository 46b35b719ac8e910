// Benchmark: the compiled binary joining a cluster (the API-server double, real containerd):
// spawn → Node Ready as the API server stores it, for a node that already has its kubeconfig
// (restart of a joined node) and for a fresh join through TLS bootstrap (bootstrap token → CSR
// auto-approved → client cert → register → Ready). Goal: start → Node Ready ≤ 1 s.
//   bun scripts/bench/join-ready.ts [runs] [--trace] [--baseline=PATH]
//   (default 5 runs; builds dist/bunlet first if stale; root)
// --baseline=PATH runs another build (e.g. main's) alternately with dist/bunlet, run for run, so both
// see the same machine load (2 CPUs shared with other work: figures swing 3x with the load).
// --trace prints the last fresh join's log, each line with its offset from spawn, to see where the time goes.
import { join } from "node:path";
import { spawnBunlet } from "../../test/support/binary.ts";
import { createScratchCluster } from "./lib/scratch-cluster.ts";
import { percentile } from "./lib/scratch-node.ts";

const GOAL_MS = 1000;
const runs = Number(process.argv.slice(2).find((a) => /^\d+$/.test(a)) ?? 5);
const trace = process.argv.includes("--trace");
const baseline = process.argv.find((a) => a.startsWith("--baseline="))?.slice("--baseline=".length);
const NODE = `bench-join-${process.pid}`;

const cluster = await createScratchCluster("join");
const { api } = cluster;
/** Resolves when the API server stores the node Ready (an etcd watch on the Node). */
async function watchReady(): Promise<{ at: Promise<number> }> {
  let resolve!: (ms: number) => void;
  const p = new Promise<number>((r) => (resolve = r));
  const off = await api.store.watch(`nodes//${NODE}`, await api.store.revision(), (c) => {
    if (c.type !== "DELETED" && c.object.status?.conditions?.some((x: any) => x.type === "Ready" && x.status === "True")) {
      off();
      resolve(performance.now());
    }
  });
  return { at: p }; // wrapped: an async function returning a promise would wait for it
}

const lastTrace = new Map<string, string>();
/** The log's klog stamps (hh:mm:ss.mmm) as offsets from the spawn. */
function offsets(stderr: string, spawnEpochMs: number): string {
  const day = new Date(spawnEpochMs);
  return stderr
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const m = /^[IWEF]\d{4} (\d\d):(\d\d):(\d\d)\.(\d{3})/.exec(line);
      if (!m) return `        ${line}`;
      const at = new Date(day);
      at.setHours(Number(m[1]), Number(m[2]), Number(m[3]), Number(m[4]));
      return `${String(at.getTime() - spawnEpochMs).padStart(6)}ms ${line.slice(line.indexOf("]") + 2)}`;
    })
    .join("\n");
}

async function once(i: number, bootstrap: boolean, binary?: string): Promise<number> {
  const args = await cluster.joinFlags(join(cluster.dir, `${bootstrap ? "b" : "k"}${i}${binary ? "-base" : ""}`), NODE, { bootstrap });
  await api.store.delete(`nodes//${NODE}`);
  await api.store.delete(`leases.coordination.k8s.io/kube-node-lease/${NODE}`);
  const ready = (await watchReady()).at;
  const t0 = performance.now();
  const epoch0 = Date.now();
  const p = spawnBunlet(args, { binary });
  const t1 = await Promise.race([ready, Bun.sleep(20_000).then(() => -1)]);
  await p.stop("SIGTERM");
  if (trace && bootstrap) lastTrace.set(binary ?? "this build", `${offsets(p.stderr(), epoch0)}\n  → Ready stored at ${(t1 - t0).toFixed(0)} ms`);
  if (t1 < 0) throw new Error(`Node not Ready after 20 s:\n${p.stderr()}`);
  return t1 - t0;
}

try {
  const line = (label: string, bootstrap: boolean, ms: number[]) => {
    const med = percentile(ms, 50);
    console.log(
      `${label}${bootstrap ? "fresh join (TLS bootstrap)" : "joined node restart      "}  start → Node Ready: median ${med.toFixed(0)} ms, p90 ${percentile(ms, 90).toFixed(0)} ms ` +
        `(runs ${runs}; goal ≤ ${GOAL_MS} ms → ${(med / GOAL_MS).toFixed(2)}x of the goal)`,
    );
  };
  for (const bootstrap of [false, true]) {
    const ms: number[] = [];
    const base: number[] = [];
    for (let i = 0; i < runs; i++) {
      ms.push(await once(i, bootstrap));
      if (baseline) base.push(await once(i, bootstrap, baseline));
    }
    line(baseline ? "this build: " : "", bootstrap, ms);
    if (baseline) {
      line("baseline:   ", bootstrap, base);
      console.log(`            → this build / baseline: ${(percentile(ms, 50) / percentile(base, 50)).toFixed(2)}x`);
    }
  }
  for (const [which, text] of lastTrace) console.log(`last fresh join of ${which}, log offsets from spawn:\n${text}`);
} finally {
  await cluster.close();
}
