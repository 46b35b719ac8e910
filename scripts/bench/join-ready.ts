// Benchmark: the compiled binary joining a cluster (the API-server double, real containerd):
// spawn → Node Ready as the API server stores it, for a node that already has its kubeconfig
// (restart of a joined node) and for a fresh join through TLS bootstrap (bootstrap token → CSR
// auto-approved → client cert → register → Ready). Goal from issue 12: start → Node Ready ≤ 1 s.
//   bun scripts/bench/join-ready.ts [runs]     (default 5; builds dist/bunlet first if stale; root)
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startApiServer } from "../../test/support/apiserver/index.ts";
import { ensureBuilt, freePort, spawnBunlet } from "../../test/support/binary.ts";
import { acquireContainerd } from "../../test/support/containerd.ts";
import { removeCgroupTree } from "../../test/support/cgroup.ts";

const GOAL_MS = 1000;
const runs = Number(process.argv[2] ?? 5);
const NODE = `bench-join-${process.pid}`;
const CGROUP_ROOT = `/bunlet-bench-join-${process.pid}`;

const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil((p / 100) * xs.length) - 1)]!;

await ensureBuilt();
const ctd = await acquireContainerd();
const api = await startApiServer();
const dir = mkdtempSync(join(tmpdir(), `bunlet-bench-join-${process.pid}-`));
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

async function once(i: number, bootstrap: boolean): Promise<number> {
  const root = join(dir, `${bootstrap ? "b" : "k"}${i}`);
  mkdirSync(join(root, "manifests"), { recursive: true });
  const kubeconfig = join(root, "kubelet.conf");
  const args = [
    `--root-dir=${join(root, "root")}`, `--pod-manifest-path=${join(root, "manifests")}`, `--cgroup-root=${CGROUP_ROOT}`,
    `--container-runtime-endpoint=${ctd.endpoint}`, `--hostname-override=${NODE}`, `--port=${freePort()}`, "--healthz-port=0", "--read-only-port=0",
    `--kubeconfig=${kubeconfig}`, `--cert-dir=${join(root, "pki")}`,
  ];
  if (bootstrap) {
    await api.writeKubeconfig(join(root, "bootstrap.conf"), { token: api.bootstrapToken });
    args.push(`--bootstrap-kubeconfig=${join(root, "bootstrap.conf")}`);
  } else {
    await api.writeKubeconfig(kubeconfig, await api.issueClientCert(`system:node:${NODE}`, ["system:nodes"]));
  }
  await api.store.delete(`nodes//${NODE}`);
  await api.store.delete(`leases.coordination.k8s.io/kube-node-lease/${NODE}`);
  const ready = (await watchReady()).at;
  const t0 = performance.now();
  const p = spawnBunlet(args);
  const t1 = await Promise.race([ready, Bun.sleep(20_000).then(() => -1)]);
  await p.stop("SIGTERM");
  if (t1 < 0) throw new Error(`Node not Ready after 20 s:\n${p.stderr()}`);
  return t1 - t0;
}

try {
  for (const bootstrap of [false, true]) {
    const ms: number[] = [];
    for (let i = 0; i < runs; i++) ms.push(await once(i, bootstrap));
    const med = percentile(ms, 50);
    console.log(
      `${bootstrap ? "fresh join (TLS bootstrap)" : "joined node restart      "}  start → Node Ready: median ${med.toFixed(0)} ms, p90 ${percentile(ms, 90).toFixed(0)} ms ` +
        `(runs ${runs}; goal ≤ ${GOAL_MS} ms → ${(med / GOAL_MS).toFixed(2)}x of the goal)`,
    );
  }
} finally {
  await api.close();
  rmSync(dir, { recursive: true, force: true });
  removeCgroupTree(CGROUP_ROOT);
  await ctd.release();
}
