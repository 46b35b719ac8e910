// vs-kubelet.ts's figure 6, cluster mode: each agent joined to a real control plane (the upstream
// kube-apiserver, kube-controller-manager and kube-scheduler of test/support/upstream, with the API
// server's audit log) as `kubeadm join` joins a node, through TLS bootstrap. Every run is a fresh control
// plane and a fresh node (joinUpstream: kubeadm's KubeletConfiguration, the same for both agents) on the
// process's one containerd, so the agents never share state. The bench sees the API as a client does,
// by REST calls as system:masters, polled (every 50 ms; 250 ms for the many pods):
//   a. spawn → the Node's Ready condition True, a fresh join (bootstrap kubeconfig, no client cert yet);
//   b. ONE_BY_ONE pods created through the API one at a time → status.phase Running (after one untimed pod);
//   c. CLUSTER_PODS (the default maxPods) created at once → none left that is not Running;
//   d. with those pods running, after --settle and once the node has not read or written a pod for 15 s:
//      the node's requests (user system:node:<node>) received in the next --window seconds, from the
//      audit log, per minute, and by verb and resource.
// b–d come from each agent's first run; a from every run.
import { rmSync, writeFileSync } from "node:fs";
import { issueCert } from "../../../test/support/apiserver/pki.ts";
import { until } from "../../../test/support/wait.ts";
import {
  type ControlPlane,
  type UpstreamNode,
  buildUpstream,
  joinUpstream,
  startControlPlane,
  stopControlPlaneDir,
} from "../../../test/support/upstream/index.ts";
import { type AgentKind, BUSYBOX, onInterrupt } from "./scratch-node.ts";

export const CLUSTER_PODS = 110;
export const ONE_BY_ONE = 10;
const PREFIX = "vsk-";
/** The label of a set of pods created together. */
const SET_LABEL = "vsk-set";

/** Figure 6 of one agent. */
export interface ClusterFigures {
  /** a. spawn → Node Ready, ms, one sample a run. */
  readyMs: number[];
  /** b. API pod created → Running, ms, one sample a pod. */
  podRunningMs: number[];
  /** c. CLUSTER_PODS created at once → all Running, ms. */
  allRunningMs?: number;
  /** d. The node's requests in the window: per minute, and per minute by "verb resource[/subresource]". */
  requests?: { windowS: number; perMin: number; byKind: Record<string, number> };
}

export interface ClusterOptions {
  runs: number;
  windowS: number;
  settleS: number;
}

/** The cluster as its admin sees it: REST calls as system:masters. */
interface Api {
  rest(method: string, path: string, body?: unknown): Promise<any>;
}

async function adminApi(cp: ControlPlane): Promise<Api> {
  const { certPem, keyPem } = await issueCert(cp.ca, cp.dir, "/O=system:masters/CN=vsk-bench");
  const tls = { ca: cp.ca.certPem, cert: certPem, key: keyPem };
  const rest = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${cp.server}${path}`, {
      method,
      headers: { "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
      tls,
    } as RequestInit);
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return res.json();
  };
  return { rest };
}

/** Polls `done` every `intervalMs` until it holds; returns when it was seen to (performance.now()). */
async function seenAt(what: string, done: () => Promise<boolean>, timeoutMs: number, intervalMs: number): Promise<number> {
  await until(what, async () => (await done()) || undefined, timeoutMs, { intervalMs, retryErrors: true });
  return performance.now();
}

/** A light pod bound to the node (no scheduler in the timing; the same for both agents): busybox sleeping, hostNetwork. */
const podObject = (name: string, set: string, node: string) => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name, namespace: "default", labels: { [SET_LABEL]: set } },
  spec: {
    nodeName: node,
    hostNetwork: true,
    terminationGracePeriodSeconds: 1,
    containers: [{ name: "c", image: BUSYBOX, command: ["sh", "-c", "exec sleep 3600"] }],
  },
});

const PODS_PATH = "/api/v1/namespaces/default/pods";
const inSet = (set: string, field = "") => `${PODS_PATH}?labelSelector=${SET_LABEL}%3D${set}${field}`;

/**
 * Creates `count` pods of set `set` at once; resolves when none is left that is not Running (the API
 * polled every 50 ms, 250 ms for a set of many), with the time from the first create.
 */
async function podsRunning(api: Api, set: string, count: number, node: string, timeoutMs: number): Promise<number> {
  const t0 = performance.now();
  const names = Array.from({ length: count }, (_, i) => `${PREFIX}${set}-${i}`);
  await Promise.all(names.map((n) => api.rest("POST", PODS_PATH, podObject(n, set, node))));
  const notRunning = async () => (await api.rest("GET", inSet(set, "&fieldSelector=status.phase%21%3DRunning"))).items.length;
  const at = await seenAt(`${count} pods Running`, async () => (await notRunning()) === 0, timeoutMs, count > 1 ? 250 : 50).catch(async (e) => {
    throw new Error(`${(e as Error).message} (${await notRunning().catch(() => "?")} are not)`);
  });
  return at - t0;
}

/** Deletes the pods of `set` and waits until the node has removed them from the API. */
async function deletePods(api: Api, set: string): Promise<void> {
  await api.rest("DELETE", inSet(set));
  await seenAt(`the pods of ${set} deleted by the node`, async () => (await api.rest("GET", inSet(set))).items.length === 0, 120_000, 200);
}

/** d. The node's requests received in [from, to), from the audit log, each counted once. */
function nodeRequests(cp: ControlPlane, node: string, from: number, to: number): NonNullable<ClusterFigures["requests"]> {
  const windowS = (to - from) / 1000;
  const seen = new Set<string>();
  const byKind: Record<string, number> = {};
  for (const e of cp.auditEvents()) {
    const at = Date.parse(e.requestReceivedTimestamp);
    if (e.user.username !== `system:node:${node}` || at < from || at >= to || seen.has(e.auditID)) continue;
    seen.add(e.auditID);
    const r = e.objectRef;
    const kind = `${e.verb} ${r?.resource ?? e.requestURI.split("?")[0]}${r?.subresource ? `/${r.subresource}` : ""}`;
    byKind[kind] = (byKind[kind] ?? 0) + 60 / windowS;
  }
  return { windowS, perMin: (seen.size * 60) / windowS, byKind };
}

/** Quiet this long on the pods (no get, patch or update by the node) before the request window opens. */
const POD_WRITES_QUIET_S = 15;

/**
 * Waits until the audit log has shown no get, patch or update of a pod by the node for POD_WRITES_QUIET_S
 * (an agent still catching up on the statuses of pods that just started is not steady yet), at most 5 min.
 */
async function podWritesSettled(cp: ControlPlane, node: string): Promise<void> {
  const lastOnPods = () =>
    cp
      .auditEvents()
      .filter((e) => e.user.username === `system:node:${node}` && e.objectRef?.resource === "pods" && ["get", "patch", "update"].includes(e.verb))
      .reduce((last, e) => Math.max(last, Date.parse(e.requestReceivedTimestamp)), 0);
  await until("the node's requests on pods settled", () => Date.now() - lastOnPods() >= POD_WRITES_QUIET_S * 1000 || undefined, 300_000, {
    intervalMs: 1000,
  });
}

/** b–d on a Ready node. */
async function podFigures(api: Api, cp: ControlPlane, n: UpstreamNode, o: ClusterOptions, r: ClusterFigures, say: (s: string) => void): Promise<void> {
  for (let i = 0; i <= ONE_BY_ONE; i++) {
    const ms = await podsRunning(api, `one${i}`, 1, n.node, 60_000);
    if (i > 0) r.podRunningMs.push(ms);
    say(`${i === 0 ? "untimed pod" : `pod ${i}`} created → Running: ${ms.toFixed(0)} ms`);
  }
  for (let i = 0; i <= ONE_BY_ONE; i++) await deletePods(api, `one${i}`);
  r.allRunningMs = await podsRunning(api, "many", CLUSTER_PODS, n.node, 300_000);
  say(`${CLUSTER_PODS} pods created at once → all Running: ${(r.allRunningMs / 1000).toFixed(1)} s`);
  await Bun.sleep(o.settleS * 1000);
  await podWritesSettled(cp, n.node);
  const from = Date.now();
  await Bun.sleep(o.windowS * 1000);
  const to = Date.now();
  await Bun.sleep(1000);
  r.requests = nodeRequests(cp, n.node, from, to);
  say(`${r.requests.perMin.toFixed(1)} requests/min by the node: ${JSON.stringify(r.requests.byKind)}`);
}

/** One run of one agent: a fresh control plane and node; a, and with `pods` b–d. */
async function clusterRun(
  kind: AgentKind,
  binary: string,
  binDir: string,
  pods: boolean,
  o: ClusterOptions,
  r: ClusterFigures,
  say: (s: string) => void,
): Promise<void> {
  const dir = `/tmp/bunlet-vsk-cp-${kind}-${process.pid}`;
  let n: UpstreamNode | undefined;
  // The control plane's own stop(), by its directory: also for a Ctrl-C while it starts.
  const stop = async () => {
    await n?.stop().catch((e) => say(`node cleanup: ${e}`));
    await stopControlPlaneDir(dir);
    rmSync(dir, { recursive: true, force: true });
  };
  const offInterrupt = onInterrupt(stop);
  try {
    const cp = await startControlPlane({ dir, binDir, audit: true });
    const api = await adminApi(cp);
    let t0 = 0;
    n = await joinUpstream({ name: `vsk-cluster-${kind}`, cp, agent: kind, binary, prepare: () => void (t0 = performance.now()) });
    const node = n.node;
    const ready = async () =>
      (await api.rest("GET", `/api/v1/nodes/${node}`)).status?.conditions?.some((c: any) => c.type === "Ready" && c.status === "True") === true;
    r.readyMs.push((await seenAt(`${kind}: Node Ready`, ready, 120_000, 50)) - t0);
    say(`${kind}: start → Node Ready ${r.readyMs.at(-1)!.toFixed(0)} ms`);
    if (pods) await podFigures(api, cp, n, o, r, (s) => say(`${kind}: ${s}`));
  } catch (e) {
    throw new Error(`${(e as Error).message}\n--- ${kind}'s log, its end ---\n${n?.proc.stderr().slice(-3000) ?? ""}`);
  } finally {
    if (pods && n) {
      writeFileSync(`/tmp/bunlet-vsk-cluster-${kind}.log`, n.proc.stderr());
      say(`${kind}'s log: /tmp/bunlet-vsk-cluster-${kind}.log`);
    }
    offInterrupt();
    await stop();
  }
}

/**
 * Figure 6 for both agents: `runs` runs each, alternately (ABBA order, the kubelet first), b–d in the
 * first. Failures go to `fail` and the figures measured so far stay in `out`.
 */
export async function clusterFigures(
  binaries: Record<AgentKind, string>,
  o: ClusterOptions,
  out: Record<AgentKind, { cluster?: ClusterFigures }>,
  log: { say(s: string): void; fail(kind: AgentKind, what: string, e: unknown): void },
): Promise<void> {
  const binDir = await buildUpstream("kube-apiserver kube-controller-manager kube-scheduler kubectl");
  for (const kind of ["kubelet", "bunlet"] as const) out[kind].cluster = { readyMs: [], podRunningMs: [] };
  for (let i = 0; i < o.runs; i++)
    for (const kind of i % 2 === 0 ? (["kubelet", "bunlet"] as const) : (["bunlet", "kubelet"] as const))
      await clusterRun(kind, binaries[kind], binDir, i === 0, o, out[kind].cluster!, log.say).catch((e) => log.fail(kind, `figure 6, run ${i + 1}`, e));
}
