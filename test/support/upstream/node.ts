// A bunlet binary joined to a real control plane (control-plane.ts) as `kubeadm join` makes a node
// join: kubeadm's KubeletConfiguration (webhook authentication and authorization, the cluster CA for
// x509 clients, certificate rotation), a bootstrap kubeconfig with a bootstrap token, a --kubeconfig
// that does not exist yet, and a test containerd. stop() stops bunlet, deletes its Node and removes
// the pods it ran (API pods and static pods), its cgroups and files, even when a test failed half-way.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { parse, stringify } from "yaml";
import { createKubeRuntime } from "../../../src/pod/kuberuntime/manager.ts";
import { ensureBuilt, freePort, spawnBunlet, type BunletProcess } from "../binary.ts";
import { issueCert } from "../apiserver/pki.ts";
import { until } from "../wait.ts";
import { acquireContainerd, tearDownPods, type TestContainerd } from "../containerd.ts";
import { stopKubepodsSlices } from "../cgroup.ts";
import { startControlPlane, type AuditEvent, type ControlPlane } from "./control-plane.ts";
import { forUpstreamKubelet, kubeadmKubeletConfig } from "./kubelet-config.ts";

export interface UpstreamNodeOptions {
  /** Names the node's files (/tmp/bunlet-<name>-<pid>) and cgroup root; the Node itself is `localhost` (see NODE_NAME). */
  name: string;
  cp: ControlPlane;
  /** Extra KubeletConfiguration lines (YAML, top level). */
  config?: string[];
  /** Extra command-line flags. */
  flags?: string[];
  /** The node agent: bunlet (dist/bunlet, built if stale, or `binary`) or the upstream kubelet at `binary`. */
  agent?: "bunlet" | "kubelet";
  binary?: string;
  /** cgroupDriver systemd (a systemd host): containerd's runc with SystemdCgroup, cgroupRoot "/", the kubepods slices stopped on stop(). */
  systemd?: boolean;
  /**
   * The API server address the agent is given (its bootstrap kubeconfig's, and so the --kubeconfig it
   * writes after the TLS bootstrap): default the control plane's own, e.g. a proxy in front of it.
   */
  server?: string;
  /** Runs once containerd is up and before the agent starts (e.g. to write static pod manifests). */
  prepare?(n: { ctd: TestContainerd; manifests: string; base: string; cgroupRoot: string }): void | Promise<void>;
}

export interface UpstreamNode {
  node: string;
  base: string;
  rootDir: string;
  cgroupRoot: string;
  manifests: string;
  port: number;
  ctd: TestContainerd;
  proc: BunletProcess;
  /**
   * Stops the agent (SIGTERM, or `signal`: SIGKILL is a crash; its pods keep running) and starts it again
   * with the same arguments; `proc` is then the new process.
   */
  restart(between?: () => Promise<void>, signal?: NodeJS.Signals): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The Node's name, and so its Hostname address. A node's IP cannot be loopback (upstream's and bunlet's
 * validateNodeIP), so the node keeps its detected InternalIP, and the control
 * plane reaches the node's port by its Hostname address (--kubelet-preferred-address-types), which
 * resolves to 127.0.0.1: the API server's traffic to the node never leaves loopback.
 */
export const NODE_NAME = "localhost";

/**
 * Kills at once and removes every pod the node ran — those with a directory under <rootDir>/pods — and
 * not the pods of another node on the same containerd.
 */
async function removeOwnPods(ctd: TestContainerd, rootDir: string): Promise<void> {
  const rt = createKubeRuntime({ cri: ctd.cri, rootDir });
  for (const p of await rt.getPods(true).catch(() => [])) {
    if (!existsSync(join(rootDir, "pods", p.uid))) continue;
    await rt.killPod(p, 0).catch(() => {});
    await rt.removePod(p.uid).catch(() => {});
    await rt.tearDownVolumes?.(p.uid).catch(() => {});
  }
}

/** A copy of the kubeconfig at `from` whose cluster is reached at `server`, written to `to`; returns `to`. */
function withServer(from: string, server: string, to: string): string {
  const kc = parse(readFileSync(from, "utf8")) as { clusters: { cluster: { server: string } }[] };
  for (const c of kc.clusters) c.cluster.server = server;
  writeFileSync(to, stringify(kc), { mode: 0o600 });
  return to;
}

/** Joins a bunlet to the control plane; see the file header. Resolves once the process runs (not once Ready). */
export async function joinUpstream(o: UpstreamNodeOptions): Promise<UpstreamNode> {
  const node = NODE_NAME;
  const base = `/tmp/bunlet-${o.name}-${process.pid}`;
  const rootDir = join(base, "root");
  const cgroupRoot = o.systemd ? "/" : `/bunlet-${o.name}-${process.pid}`;
  const manifests = join(base, "manifests");
  mkdirSync(manifests, { recursive: true });
  const port = freePort();
  const ctd = await acquireContainerd(o.systemd ? { systemdCgroup: true } : {});
  let proc: BunletProcess | undefined;
  let respawn: () => BunletProcess = () => {
    throw new Error("joinUpstream: not started");
  };
  const stop = async () => {
    await proc?.stop("SIGTERM", 15_000);
    await o.cp.kubectl("delete", "node", node, "--ignore-not-found", "--wait=false").catch(() => {});
    const removePods = async () => {
      await removeOwnPods(ctd, rootDir);
      if (o.systemd) stopKubepodsSlices();
    };
    // With the systemd driver the slices' stop removed the pods' cgroups; "/" is not the node's to remove.
    await tearDownPods(ctd, removePods, o.systemd ? "/kubepods.slice" : cgroupRoot, base);
  };
  try {
    await o.prepare?.({ ctd, manifests, base, cgroupRoot });
    const config = join(base, "kubelet.yaml");
    const kubelet = o.agent === "kubelet";
    if (kubelet && !o.binary) throw new Error("joinUpstream: the upstream kubelet needs its binary");
    const binary = o.binary ?? (await ensureBuilt());
    const paths = { manifests, endpoint: ctd.endpoint, cgroupRoot, podLogsDir: join(base, "logs"), port };
    const text = kubeadmKubeletConfig({ ...paths, caFile: o.cp.caFile, cgroupDriver: o.systemd ? "systemd" : "cgroupfs" }, o.config);
    await Bun.write(config, kubelet ? forUpstreamKubelet(text, cgroupRoot) : text);
    respawn = () => spawnBunlet(args, { binary });
    const args = [
      "--config",
      config,
      `--bootstrap-kubeconfig=${o.server ? withServer(o.cp.bootstrap, o.server, join(base, "bootstrap-kubelet.kubeconfig")) : o.cp.bootstrap}`,
      `--kubeconfig=${join(base, "kubelet.conf")}`,
      `--cert-dir=${join(base, "pki")}`,
      `--root-dir=${rootDir}`,
      `--hostname-override=${node}`,
      ...(o.flags ?? []),
    ];
    proc = respawn();
  } catch (e) {
    await stop().catch(() => {});
    throw e;
  }
  const n: UpstreamNode = {
    node,
    base,
    rootDir,
    cgroupRoot,
    manifests,
    port,
    ctd,
    proc,
    async restart(between, signal = "SIGTERM") {
      await proc?.stop(signal, 15_000);
      await between?.();
      n.proc = proc = respawn();
    },
    stop,
  };
  return n;
}

/** Whether something accepts TCP connections on 127.0.0.1:`port`. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, "127.0.0.1", () => {
      s.destroy();
      resolve(true);
    });
    s.on("error", () => resolve(false));
  });
}

/**
 * Waits until the Node reports Ready and its port listens (on a first start bunlet makes its self-signed
 * serving pair meanwhile, and may report Ready first); fails early, with the agent's output, if the agent exits.
 */
export async function waitNodeReady(cp: ControlPlane, n: UpstreamNode, timeoutMs = 120_000): Promise<void> {
  const ready = async () => {
    const out = await cp.kubectl("get", "node", n.node, "-o", 'jsonpath={.status.conditions[?(@.type=="Ready")].status}').catch(() => "");
    return out.trim() === "True" && (await listening(n.port));
  };
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await ready()) return;
    const exited = n.proc.proc.exitCode !== null || n.proc.proc.signalCode !== null;
    if (exited || Date.now() > deadline) {
      throw new Error(
        `${n.node} is not Ready and serving${exited ? " (the agent exited)" : ` after ${timeoutMs} ms`}\n--- agent stderr ---\n${n.proc.stderr().slice(-6000)}`,
      );
    }
    await Bun.sleep(500);
  }
}

export interface UpstreamCluster {
  cp: ControlPlane;
  n: UpstreamNode;
  /** The API server's audit log (control-plane.ts AUDIT_POLICY), when asked for. */
  audit?: { events(): AuditEvent[] };
  /** kubectl … -o json, parsed. */
  json(...args: string[]): Promise<any>;
  /**
   * A request to the node's port as kube-apiserver makes one (its kubelet-client identity, system:masters):
   * for the node's own endpoints, since kube-apiserver refuses to proxy nodes/proxy to a loopback address.
   */
  nodeRequest(path: string, init?: RequestInit): Promise<Response>;
  /** Waits until the pod `name` of the default namespace is in `phase` (default 60 s); returns it. */
  podInPhase(name: string, phase: string, timeoutMs?: number): Promise<any>;
  /** Stops the node, then the control plane. */
  stop(): Promise<void>;
}

/**
 * One test file's cluster: a control plane of its own (under /tmp/bunlet-upstream-<name>-<pid>, with
 * `apiserverFlags` and, with `audit`, the API server's audit log) and a bunlet joined to it, Ready.
 */
export async function startUpstreamCluster(
  o: Omit<UpstreamNodeOptions, "cp" | "server"> & {
    binDir: string;
    apiserverFlags?: string[];
    audit?: boolean;
    /** The API server address the node is given, once the control plane runs (UpstreamNodeOptions.server). */
    nodeServer?: (cp: ControlPlane) => string | Promise<string>;
  },
): Promise<UpstreamCluster> {
  const dir = `/tmp/bunlet-upstream-${o.name}-${process.pid}`;
  const cp = await startControlPlane({ dir, binDir: o.binDir, apiserverFlags: o.apiserverFlags, audit: o.audit });
  const audit = o.audit ? { events: () => cp.auditEvents() } : undefined;
  let n: UpstreamNode | undefined;
  const stop = async () => {
    await n?.stop();
    await cp.stop();
  };
  try {
    n = await joinUpstream({ ...o, cp, server: await o.nodeServer?.(cp) });
    await waitNodeReady(cp, n);
  } catch (e) {
    await stop().catch(() => {});
    throw e;
  }
  const json = async (...args: string[]) => JSON.parse(await cp.kubectl(...args, "-o", "json"));
  const podInPhase = (name: string, phase: string, timeoutMs = 60_000) =>
    until(
      `${name} ${phase} in the API`,
      async () => {
        const o = await json("get", "pod", name).catch(() => undefined);
        return o?.status?.phase === phase ? o : undefined;
      },
      timeoutMs,
      { intervalMs: 500 },
    );
  let client: Promise<{ certPem: string; keyPem: string }> | undefined;
  const nodeRequest = async (path: string, init: RequestInit = {}) => {
    const { certPem, keyPem } = await (client ??= issueCert(cp.ca, cp.dir, "/O=system:masters/CN=kube-apiserver-kubelet-client"));
    return fetch(`https://127.0.0.1:${n!.port}${path}`, { ...init, tls: { cert: certPem, key: keyPem, rejectUnauthorized: false } });
  };
  return { cp, n, audit, json, nodeRequest, podInPhase, stop };
}

const MIB = 1024 * 1024;

/** Where memoryPressureNode() can fence the node: cgroup v1's memory hierarchy (this host's). */
export const canFenceMemory = !existsSync("/sys/fs/cgroup/cgroup.controllers") && existsSync("/sys/fs/cgroup/memory");

/**
 * The options of a node made to feel memory pressure without the host feeling any: pods get
 * `allocatableMiB` (systemReserved is the rest of the machine, enforced on kubepods), a hard
 * memory.available threshold (which the kubelet copies onto allocatableMemory.available), the kernel's
 * memcg notifications (unless `kernelMemcgNotification` is false), and a fence on the cgroup root a little above allocatable (cgroup v1), so a pod
 * that outran eviction meets its own OOM killer, never the host's.
 */
export function memoryPressureNode(o: {
  allocatableMiB: number;
  thresholdMiB: number;
  transitionS: number;
  kernelMemcgNotification?: boolean;
}): Pick<UpstreamNodeOptions, "config" | "prepare"> {
  const total = Number(/^MemTotal:\s+(\d+) kB/m.exec(readFileSync("/proc/meminfo", "utf8"))?.[1]) * 1024;
  return {
    config: [
      "nodeStatusUpdateFrequency: 1s",
      "enforceNodeAllocatable: [pods]",
      `systemReserved: { memory: "${total - o.allocatableMiB * MIB}" }`,
      `evictionHard: { memory.available: ${o.thresholdMiB}Mi }`,
      `evictionPressureTransitionPeriod: ${o.transitionS}s`,
      `kernelMemcgNotification: ${o.kernelMemcgNotification ?? true}`,
    ],
    prepare: ({ cgroupRoot }) => {
      // On cgroup v2 (the v2 guest, a machine of its own) there is no v1 hierarchy to fence in.
      if (!canFenceMemory) return;
      const root = `/sys/fs/cgroup/memory${cgroupRoot}`;
      mkdirSync(root, { recursive: true });
      writeFileSync(join(root, "memory.limit_in_bytes"), String((o.allocatableMiB + 128) * MIB));
    },
  };
}
