// An in-process bunlet running static pods on a test containerd in standalone mode (no API server), as
// the agent integration tests set it up: containerd, the manifest directory (prepare() may fill it), a
// KubeletConfiguration for static pods plus the test's own lines, and the agent started with its
// runtime ready. stop() stops the agent and removes the node's pods, cgroups and files, even when a test
// failed half-way. The same with the API-server double: cluster.ts.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { createNodeAgent, type NodeAgent } from "../../src/agent.ts";
import { loadConfig } from "../../src/config/load.ts";
import { createKubeRuntime } from "../../src/pod/kuberuntime/manager.ts";
import type { NodeAgentOpts } from "../../src/node-agent-context.ts";
import { writeStaticPodConfig } from "./agent.ts";
import { freePort } from "./binary.ts";
import { acquireContainerd, removeNodePods, tearDownPods, type TestContainerd } from "./containerd.ts";

export interface StandaloneOpts {
  /** The node's files: manifests/, logs/, root/ and kubelet.yaml under it. */
  base: string;
  cgroupRoot: string;
  /** --hostname-override; static pods are named <pod>-<node>. */
  node: string;
  /** Extra KubeletConfiguration lines (YAML). */
  config?: string[];
  /** Extra command-line flags. */
  flags?: string[];
  /** The main server's port (default: a free one). */
  port?: number;
  /** createNodeAgent's options beyond protectSelf: false. */
  agent?: Omit<NodeAgentOpts, "protectSelf">;
  /** The containerd to run on (default: the process's shared one, acquireContainerd); released by stop(). */
  containerd?: () => Promise<TestContainerd>;
  /** Runs once containerd is up and the manifest directory exists, before the agent starts (e.g. to write manifests). */
  prepare?(c: { ctd: TestContainerd; manifests: string }): void | Promise<void>;
}

export interface StandaloneNode {
  ctd: TestContainerd;
  agent: NodeAgent;
  manifests: string;
  /** The main server's URL (plain HTTP). */
  url: string;
  /** Stops the agent; removes the node's pods, cgroups and files. `cleanPods` replaces the default pod removal. */
  stop(cleanPods?: () => Promise<void>): Promise<void>;
}

/** Starts a standalone bunlet on a test containerd; see the file header. */
export async function startStandaloneNode(o: StandaloneOpts): Promise<StandaloneNode> {
  const manifests = join(o.base, "manifests");
  const ctd = await (o.containerd ?? acquireContainerd)();
  let agent: NodeAgent | undefined;
  const stop = async (cleanPods?: () => Promise<void>) => {
    await agent?.stop();
    await tearDownPods(ctd, cleanPods ?? (() => removeNodePods(createKubeRuntime({ cri: ctd.cri }), o.node)), o.cgroupRoot, o.base);
  };
  try {
    mkdirSync(manifests, { recursive: true });
    await o.prepare?.({ ctd, manifests });
    const config = writeStaticPodConfig(
      join(o.base, "kubelet.yaml"),
      { manifests, endpoint: ctd.endpoint, cgroupRoot: o.cgroupRoot, podLogsDir: join(o.base, "logs"), port: o.port ?? freePort() },
      o.config ?? [],
    );
    const loaded = await loadConfig(["--config", config, `--hostname-override=${o.node}`, `--root-dir=${join(o.base, "root")}`, ...(o.flags ?? [])]);
    agent = createNodeAgent(loaded, { ...o.agent, protectSelf: false });
    await agent.start();
    if (!(await agent.runtimeReady)) throw new Error(`the runtime at ${ctd.endpoint} is not ready`);
    return { ctd, agent, manifests, url: agent.servers()!.get("main")!.url, stop };
  } catch (e) {
    await stop().catch(() => {});
    throw e;
  }
}
