// A throw-away standalone node for benchmarks of a compiled agent — bunlet (dist/bunlet, built first if
// stale) or the upstream kubelet (its binary given) — on a private containerd (test/support, shared by
// every node of the process): a temporary root with a static pod manifest directory, a unique cgroup
// root and node name, and one KubeletConfiguration both agents take (test/support/upstream
// kubelet-config.ts standaloneKubeletConfig; the kubelet's made ready as joined nodes make it).
// cleanup() — also run on Ctrl-C/SIGTERM — stops the agent, removes the node's pods through the CRI (the
// agent leaves running pods running, as the kubelet does), the cgroup tree and the directories, and
// releases containerd.
// Used by idle.ts, podstart.ts and vs-kubelet.ts; api-pods.ts and join-ready.ts share its small helpers (percentile, loadAverage).
import { mkdirSync, mkdtempSync, renameSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { type BunletProcess, ensureBuilt, freePort, killAll, spawnBunlet } from "../../../test/support/binary.ts";
import { staticPodYaml } from "../../../test/support/manifests.ts";
import { type TestContainerd, acquireContainerd, removeSandboxes, tearDownPods } from "../../../test/support/containerd.ts";
import { forUpstreamKubelet, standaloneKubeletConfig } from "../../../test/support/upstream/kubelet-config.ts";
import { stopKubepodsSlices } from "../../../test/support/cgroup.ts";
import { pollUntil } from "../../../test/support/wait.ts";
import { POD_NAME_LABEL } from "../../../src/pod/kuberuntime/labels.ts";

export const BUSYBOX = "bunlet.local/busybox:1";

export type AgentKind = "bunlet" | "kubelet";

export interface ScratchNode {
  kind: AgentKind;
  /** Node name; the agent's static pods are named <pod>-<node>. */
  node: string;
  base: string;
  manifests: string;
  cgroupRoot: string;
  /** The agent's main port (/healthz, /pods, /metrics): plain HTTP for bunlet, HTTPS (self-signed) for the kubelet. */
  port: number;
  ctd: TestContainerd;
  /** The running agent, once startAgent() returned. */
  agent?: BunletProcess;
  /** GET on the agent's main port (the kubelet's self-signed certificate accepted). */
  get(path: string): Promise<Response>;
  /** Starts the agent and waits until its pod lifecycle is up (/healthz and /pods answer). */
  startAgent(opts?: { binary?: string; env?: Record<string, string> /** Extra command-line flags. */; args?: string[] }): Promise<BunletProcess>;
  /** SIGTERM, bounded: the agent's pods keep running. */
  stopAgent(): Promise<void>;
  /** Writes each manifest beside the directory, then rename(2)s it in: the file source never reads a partial file. */
  stageManifests(manifests: Record<string, string>): () => void;
  cleanup(): Promise<void>;
}

export interface ScratchNodeOptions {
  /** Build dist/bunlet first if stale (default true; bunlet only). */
  build?: boolean;
  /** Default bunlet. */
  agent?: AgentKind;
  /** The agent's binary: dist/bunlet by default, required for the kubelet. */
  binary?: string;
  /**
   * cgroupDriver systemd (a systemd host: the v2 guest booted with --systemd): containerd's runc with
   * SystemdCgroup, cgroupRoot "/", the kubepods slices stopped on cleanup.
   */
  systemd?: boolean;
}

const interruptCleanups: (() => Promise<void>)[] = [];
let interruptHandlers = false;

/** Runs `fn` on Ctrl-C or SIGTERM (the latest registered first), then exits 130; returns its removal. */
export function onInterrupt(fn: () => Promise<void>): () => void {
  if (!interruptHandlers)
    for (const sig of ["SIGINT", "SIGTERM"] as const)
      process.on(sig, () => {
        console.error(`\n${sig}: cleaning up`);
        void (async () => {
          for (const f of [...interruptCleanups].reverse()) await f().catch((e) => console.error(`cleanup: ${e}`));
        })().finally(() => process.exit(130));
      });
  interruptHandlers = true;
  interruptCleanups.push(fn);
  return () => {
    const i = interruptCleanups.indexOf(fn);
    if (i >= 0) interruptCleanups.splice(i, 1);
  };
}

let nodes = 0;

/** `label` names the temporary directory and cgroup root (bunlet-bench-<label>-<pid>-<n>). */
export async function createScratchNode(label: string, opts: ScratchNodeOptions = {}): Promise<ScratchNode> {
  const kind = opts.agent ?? "bunlet";
  if (kind === "kubelet" && !opts.binary) throw new Error("createScratchNode: the upstream kubelet needs its binary");
  const n = nodes++;
  const base = mkdtempSync(join(tmpdir(), `bunlet-bench-${label}-${process.pid}-${n}-`));
  const manifests = join(base, "manifests");
  const staging = join(base, "staging");
  mkdirSync(manifests, { recursive: true });
  mkdirSync(staging, { recursive: true });
  const cgroupRoot = opts.systemd ? "/" : `/bunlet-bench-${label}-${process.pid}-${n}`;
  const node = `bench-${process.pid}-${n}`;
  const port = freePort();
  let ctd: TestContainerd | undefined;
  let cleaning: Promise<void> | undefined;
  const self: ScratchNode = {
    kind,
    node,
    base,
    manifests,
    cgroupRoot,
    port,
    ctd: undefined as unknown as TestContainerd,
    get: (path) =>
      kind === "kubelet" ? fetch(`https://127.0.0.1:${port}${path}`, { tls: { rejectUnauthorized: false } }) : fetch(`http://127.0.0.1:${port}${path}`),
    async startAgent(a = {}) {
      const agent = spawnBunlet([...agentFlags(self, opts.systemd), ...(a.args ?? [])], { binary: a.binary ?? opts.binary, env: a.env });
      self.agent = agent;
      await waitServing(self, agent);
      return agent;
    },
    async stopAgent() {
      await self.agent?.stop("SIGTERM", 10_000).catch(() => {});
      self.agent = undefined;
    },
    stageManifests(files) {
      for (const [name, text] of Object.entries(files)) writeFileSync(join(staging, `${name}.yaml`), text);
      return () => {
        for (const name of Object.keys(files)) renameSync(join(staging, `${name}.yaml`), join(manifests, `${name}.yaml`));
      };
    },
    cleanup() {
      cleaning ??= (async () => {
        unregister();
        await self.stopAgent();
        await killAll();
        const removePods = async () => {
          await removeNodePods(ctd, node);
          if (opts.systemd) stopKubepodsSlices();
        };
        // With the systemd driver the slices' stop removed the pods' cgroups; "/" is not the node's to remove.
        await tearDownPods(ctd, removePods, opts.systemd ? "/kubepods.slice" : cgroupRoot, base);
      })();
      return cleaning;
    },
  };
  const unregister = onInterrupt(() => self.cleanup());
  try {
    if (kind === "bunlet" && opts.build !== false && !opts.binary) await ensureBuilt();
    ctd = await acquireContainerd(opts.systemd ? { systemdCgroup: true } : {});
    self.ctd = ctd;
  } catch (e) {
    await self.cleanup();
    throw e;
  }
  return self;
}

/**
 * Writes the node's KubeletConfiguration (its own pod log directory: the default /var/log/pods is
 * shared with every other run on this machine, and container GC would walk their leftovers every
 * minute, not this node's cost) and returns the agent's flags.
 */
function agentFlags(sn: ScratchNode, systemd = false): string[] {
  const config = join(sn.base, "kubelet.yaml");
  const paths = {
    manifests: sn.manifests,
    endpoint: sn.ctd.endpoint,
    cgroupRoot: sn.cgroupRoot,
    podLogsDir: join(sn.base, "pod-logs"),
    port: sn.port,
    cgroupDriver: systemd ? ("systemd" as const) : ("cgroupfs" as const),
  };
  const text = standaloneKubeletConfig(paths);
  writeFileSync(config, sn.kind === "kubelet" ? forUpstreamKubelet(text, sn.cgroupRoot) : text);
  return [`--config=${config}`, `--root-dir=${join(sn.base, "root")}`, `--cert-dir=${join(sn.base, "pki")}`, `--hostname-override=${sn.node}`];
}

/** Waits until /healthz and /pods answer; fails early, with the agent's output, if it exits. */
async function waitServing(sn: ScratchNode, agent: BunletProcess, timeoutMs = 60_000): Promise<void> {
  let exitCode: number | undefined;
  void agent.exited.then((c) => (exitCode = c));
  const ok = async (path: string) => {
    const r = await sn.get(path).catch(() => undefined);
    await r?.arrayBuffer();
    return r?.ok === true;
  };
  try {
    await pollUntil(
      async () => {
        if (exitCode !== undefined) throw new Error(`the ${sn.kind} exited with ${exitCode} before it served`);
        return (await ok("/healthz")) && (await ok("/pods"));
      },
      `the ${sn.kind}'s /healthz and /pods`,
      timeoutMs,
      50,
    );
  } catch (e) {
    throw new Error(`${(e as Error).message}\n--- stderr (end) ---\n${agent.stderr().slice(-6000)}`);
  }
}

/** The containers and sandboxes of `node`'s pods (named <pod>-<node>), through the CRI. */
async function removeNodePods(ctd: TestContainerd | undefined, node: string): Promise<void> {
  if (!ctd) return;
  for (const c of await ctd.cri.listContainers().catch(() => []))
    if (c.labels?.[POD_NAME_LABEL]?.endsWith(`-${node}`)) await ctd.cri.removeContainer(c.id).catch(() => {});
  await removeSandboxes(ctd.cri, node);
}

/** A static pod that sleeps: the offline busybox image (no pull), no grace period. */
export function sleeperManifest(name: string, opts: { hostNetwork?: boolean } = {}): string {
  return staticPodYaml(name, {
    image: BUSYBOX,
    command: ["sleep", "3600"],
    terminationGracePeriodSeconds: 0,
    hostNetwork: opts.hostNetwork ?? true,
    container: "      imagePullPolicy: IfNotPresent\n",
  });
}

/** The nearest-rank percentile `p` of `xs`; NaN for none. */
export function percentile(xs: number[], p: number): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
}

export const loadAverage = (): string =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(" ");
