// Benchmark: API pods on the compiled binary joined to the API-server double (real containerd, the
// offline image, hostNetwork pods so no CNI is timed). Goals:
//   1. a pod created through the API → Running as the API server stores it: median ≤ 500 ms (N one by one);
//   2. 110 pods created at once → all Running: ≤ 30 s;
//   3. steady state with those 110 pods: API requests per minute made by the node's identity, counted
//      from the double's request log (watches counted when opened). The anchor is upstream's kubelet
//      at the same defaults: status + lease only, no per-pod polling — Node GET every
//      nodeStatusUpdateFrequency (10 s), Lease PUT every 10 s (a quarter of the 40 s lease), Node status
//      PATCH only on change or every nodeStatusReportFrequency (5 min) → about 12 per minute.
//   bun scripts/bench/api-pods.ts [runs] [steady-seconds]   (default 10 runs, 60 s; root; builds dist/bunlet if stale)
import { join } from "node:path";
import { spawnBunlet } from "../../test/support/binary.ts";
import { createKubeRuntime } from "../../src/pod/kuberuntime/manager.ts";
import { createScratchCluster } from "./lib/scratch-cluster.ts";
import { loadAverage as load, percentile } from "./lib/scratch-node.ts";

const runs = Number(process.argv[2] ?? 10);
const steadySeconds = Number(process.argv[3] ?? 60);
const GOAL_ONE_MS = 500;
const GOAL_ALL_MS = 30_000;
const MANY = 110;
const UPSTREAM_PER_MIN = 12;
const NODE = `bench-api-${process.pid}`;
const PREFIX = `bapi-${process.pid}-`;

const cluster = await createScratchCluster("api");
const { ctd, api } = cluster;
let bunlet: ReturnType<typeof spawnBunlet> | undefined;

/** Pod name → when it was seen Running in the store (an etcd watch on the namespace's pods). */
const running = new Map<string, number>();
const waiters = new Map<string, () => void>();
const gone = new Set<string>();

async function rest(method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${api.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${api.adminToken}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
    tls: { ca: api.caPem },
  } as RequestInit);
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

const podObject = (name: string) => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name, namespace: "default" },
  spec: {
    nodeName: NODE,
    hostNetwork: true,
    terminationGracePeriodSeconds: 1,
    containers: [{ name: "c", image: ctd.images.busybox, command: ["sh", "-c", "exec sleep 3600"] }],
  },
});

function whenRunning(name: string): Promise<void> {
  if (running.has(name)) return Promise.resolve();
  return new Promise((r) => waiters.set(name, r));
}

async function createAndTime(name: string): Promise<number> {
  const t0 = performance.now();
  const seen = whenRunning(name);
  await rest("POST", "/api/v1/namespaces/default/pods", podObject(name));
  await Promise.race([seen, Bun.sleep(60_000).then(() => Promise.reject(new Error(`${name} not Running after 60 s:\n${bunlet?.stderr().slice(-3000)}`)))]);
  return running.get(name)! - t0;
}

async function deleteAll(names: string[]): Promise<void> {
  await Promise.all(names.map((n) => rest("DELETE", `/api/v1/namespaces/default/pods/${n}`)));
  const deadline = performance.now() + 120_000;
  while (names.some((n) => !gone.has(n))) {
    if (performance.now() > deadline) throw new Error("pods not removed by the node within 120 s");
    await Bun.sleep(100);
  }
}

try {
  await api.store.watch("pods/default/", await api.store.revision(), (c) => {
    const name = c.object?.metadata?.name as string;
    if (!name?.startsWith(PREFIX)) return;
    if (c.type === "DELETED") gone.add(name);
    else if (c.object.status?.phase === "Running" && !running.has(name)) {
      running.set(name, performance.now());
      waiters.get(name)?.();
    }
  });
  bunlet = spawnBunlet(await cluster.joinFlags(join(cluster.dir, "node"), NODE));
  const readyBy = performance.now() + 30_000;
  while (!(await api.store.get(`nodes//${NODE}`))?.status?.conditions?.some((x: any) => x.type === "Ready" && x.status === "True")) {
    if (performance.now() > readyBy) throw new Error(`Node not Ready after 30 s:\n${bunlet.stderr().slice(-3000)}`);
    await Bun.sleep(100);
  }
  console.log(`node Ready; load average ${load()} (${navigator.hardwareConcurrency} CPUs)`);

  // 1. One by one.
  const one: string[] = [];
  const ms: number[] = [];
  for (let i = 0; i < runs; i++) {
    const name = `${PREFIX}one-${i}`;
    one.push(name);
    ms.push(await createAndTime(name));
  }
  const med = percentile(ms, 50);
  console.log(
    `API pod created → Running: median ${med.toFixed(0)} ms, p90 ${percentile(ms, 90).toFixed(0)} ms (runs ${runs}; goal ≤ ${GOAL_ONE_MS} ms → ${(med / GOAL_ONE_MS).toFixed(2)}x of the goal; load ${load()})`,
  );
  await deleteAll(one);

  // 2. 110 at once.
  const many = Array.from({ length: MANY }, (_, i) => `${PREFIX}many-${i}`);
  const t0 = performance.now();
  await Promise.all(many.map((n) => rest("POST", "/api/v1/namespaces/default/pods", podObject(n))));
  const allBy = performance.now() + 180_000;
  while (many.some((n) => !running.has(n))) {
    if (performance.now() > allBy) throw new Error(`only ${many.filter((n) => running.has(n)).length}/${MANY} Running after 180 s`);
    await Bun.sleep(50);
  }
  const all = Math.max(...many.map((n) => running.get(n)!)) - t0;
  console.log(
    `${MANY} API pods created at once → all Running: ${(all / 1000).toFixed(1)} s (goal ≤ ${GOAL_ALL_MS / 1000} s → ${(all / GOAL_ALL_MS).toFixed(2)}x of the goal; load ${load()})`,
  );

  // 3. Steady state: settle 15 s (the last status patches), then count the node's requests.
  await Bun.sleep(15_000);
  const from = api.requests.length;
  await Bun.sleep(steadySeconds * 1000);
  const window = api.requests.slice(from).filter((r) => r.user.includes(NODE));
  const perMin = (window.length * 60) / steadySeconds;
  const kinds = new Map<string, number>();
  for (const r of window) {
    const k = `${r.method} ${r.path
      .split("?")[0]!
      .replace(new RegExp(NODE, "g"), "<node>")
      .replace(/\/namespaces\/[^/]+\/pods\/[^/]+/, "/namespaces/*/pods/*")}`;
    kinds.set(k, (kinds.get(k) ?? 0) + 1);
  }
  console.log(
    `steady state, ${MANY} pods, ${steadySeconds} s: ${perMin.toFixed(1)} API requests/min by the node (upstream anchor ≈ ${UPSTREAM_PER_MIN}/min: status + lease only → ${(perMin / UPSTREAM_PER_MIN).toFixed(2)}x; load ${load()})`,
  );
  for (const [k, n] of [...kinds].sort((a, b) => b[1] - a[1])) console.log(`  ${((n * 60) / steadySeconds).toFixed(1)}/min  ${k}`);
} finally {
  await bunlet?.stop("SIGTERM");
  // The agent leaves running pods running (as the kubelet does): ours are removed, then the cgroups,
  // the directory (volume mounts unmounted first) and containerd.
  await cluster.close(async () => {
    const rt = createKubeRuntime({ cri: ctd.cri });
    for (const p of await rt.getPods(true).catch(() => [])) {
      if (!p.name.startsWith(PREFIX)) continue;
      await rt.killPod(p, 0).catch(() => {});
      await rt.removePod(p.uid).catch(() => {});
    }
  });
}
