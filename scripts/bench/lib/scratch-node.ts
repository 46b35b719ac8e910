// A throw-away node for benchmarks of the compiled agent: a private containerd (test/support), a
// temporary root with a static pod manifest directory, a unique cgroup root and node name, and
// dist/bunlet (built first if stale) started on them. cleanup() — also run on Ctrl-C/SIGTERM — stops
// the agent, removes the node's pods through the CRI (the agent leaves running pods running, as the
// kubelet does), the cgroup tree and the directories, and releases containerd.
// Used by idle.ts and podstart.ts; api-pods.ts and join-ready.ts share its small helpers (percentile, loadAverage).
import { mkdirSync, mkdtempSync, renameSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { type BunletProcess, ensureBuilt, freePort, killAll, spawnBunlet, waitForHealthz } from "../../../test/support/binary.ts";
import { staticPodFlags } from "../../../test/support/agent.ts";
import { staticPodYaml } from "../../../test/support/manifests.ts";
import { type TestContainerd, acquireContainerd, removeSandboxes, tearDownPods } from "../../../test/support/containerd.ts";
import { pollUntil } from "../../../test/support/wait.ts";
import { POD_NAME_LABEL } from "../../../src/pod/kuberuntime/labels.ts";

export const BUSYBOX = "bunlet.local/busybox:1";

export interface ScratchNode {
  /** Node name; the agent's static pods are named <pod>-<node>. */
  node: string;
  base: string;
  manifests: string;
  cgroupRoot: string;
  /** The agent's main port (/healthz, /pods, /metrics on plain HTTP: no TLS without a kubeconfig). */
  port: number;
  ctd: TestContainerd;
  /** The running agent, once startAgent() returned. */
  agent?: BunletProcess;
  /** Starts the agent and waits until its pod lifecycle is up (an empty /pods answers). */
  startAgent(opts?: { binary?: string; env?: Record<string, string> /** Extra command-line flags. */; args?: string[] }): Promise<BunletProcess>;
  /** SIGTERM, bounded: the agent's pods keep running. */
  stopAgent(): Promise<void>;
  /** Writes each manifest beside the directory, then rename(2)s it in: the file source never reads a partial file. */
  stageManifests(manifests: Record<string, string>): () => void;
  cleanup(): Promise<void>;
}

/** `label` names the temporary directory and cgroup root (bunlet-bench-<label>-<pid>). */
export async function createScratchNode(label: string, opts: { build?: boolean } = {}): Promise<ScratchNode> {
  const base = mkdtempSync(join(tmpdir(), `bunlet-bench-${label}-${process.pid}-`));
  const manifests = join(base, "manifests");
  const staging = join(base, "staging");
  mkdirSync(manifests, { recursive: true });
  mkdirSync(staging, { recursive: true });
  const cgroupRoot = `/bunlet-bench-${label}-${process.pid}`;
  const node = `bench-${process.pid}`;
  let ctd: TestContainerd | undefined;
  let cleaning: Promise<void> | undefined;
  const self: ScratchNode = {
    node,
    base,
    manifests,
    cgroupRoot,
    port: freePort(),
    ctd: undefined as unknown as TestContainerd,
    async startAgent(a = {}) {
      // Its own pod log directory: the default /var/log/pods is shared with every other run on this
      // machine, and container GC would walk their leftovers every minute (not this node's cost).
      const config = join(base, "kubelet.yaml");
      writeFileSync(config, `apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\npodLogsDir: ${join(base, "pod-logs")}\n`);
      const flags = [
        `--config=${config}`,
        ...staticPodFlags({ rootDir: join(base, "root"), manifests, cgroupRoot, endpoint: self.ctd.endpoint, node, port: self.port }),
        ...(a.args ?? []),
      ];
      const agent = spawnBunlet(flags, { binary: a.binary, env: a.env });
      self.agent = agent;
      await waitForHealthz(agent, `http://127.0.0.1:${self.port}/healthz`);
      await pollUntil(async () => (await fetch(`http://127.0.0.1:${self.port}/pods`)).ok, "the agent's pod lifecycle", 30_000, 50);
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
        await self.stopAgent();
        await killAll();
        await tearDownPods(
          ctd,
          async () => {
            if (!ctd) return;
            for (const c of await ctd.cri.listContainers().catch(() => []))
              if (c.labels?.[POD_NAME_LABEL]?.endsWith(`-${node}`)) await ctd.cri.removeContainer(c.id).catch(() => {});
            await removeSandboxes(ctd.cri, node);
          },
          cgroupRoot,
          base,
        );
      })();
      return cleaning;
    },
  };
  for (const sig of ["SIGINT", "SIGTERM"] as const)
    process.on(sig, () => {
      console.error(`\n${sig}: cleaning up`);
      void self.cleanup().finally(() => process.exit(130));
    });
  try {
    if (opts.build !== false) await ensureBuilt();
    ctd = await acquireContainerd();
    self.ctd = ctd;
  } catch (e) {
    await self.cleanup();
    throw e;
  }
  return self;
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

export function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
}

export const loadAverage = (): string =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(" ");
