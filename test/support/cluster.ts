// An in-process bunlet joined to the API-server double, as the cluster integration tests set it up:
// a test containerd, the double (etcd-backed when etcd is installed), an admin kubeconfig for
// kubectl, the node's identity (a client certificate for system:node:<node>, or a bootstrap token
// for a TLS bootstrap), a KubeletConfiguration for static pods plus the test's own lines, and the
// agent started. stop() stops the agent and the double and removes the node's pods, cgroups and
// files, even when a test failed half-way.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { createNodeAgent, type NodeAgent } from "../../src/agent.ts";
import { loadConfig } from "../../src/config/load.ts";
import { createKubeRuntime } from "../../src/pod/kuberuntime/manager.ts";
import { writeStaticPodConfig } from "./agent.ts";
import { startApiServer, type ApiServerDouble, type ApiServerOptions } from "./apiserver/index.ts";
import { freePort } from "./binary.ts";
import { acquireContainerd, removeNodePods, tearDownPods, type TestContainerd } from "./containerd.ts";

export interface JoinOpts {
  /** Names the node (`<name>-<pid>`), its files (/tmp/bunlet-<name>-<pid>) and cgroup root (/bunlet-<name>-<pid>). */
  name: string;
  /** Extra KubeletConfiguration lines (YAML); a function when they need the double (e.g. its CA file). */
  config?: string[] | ((api: ApiServerDouble) => string[]);
  /** Extra command-line flags. */
  flags?: string[];
  /** How the node gets its identity: a client certificate (default) or a TLS bootstrap with the bootstrap token. */
  identity?: "certificate" | "bootstrap";
  /** Options of the double. */
  api?: ApiServerOptions;
  /** The main server's port (default: a free one). */
  port?: number;
  /** Runs once containerd and the double are up, before the agent starts (e.g. to write static pod manifests). */
  prepare?(c: { ctd: TestContainerd; api: ApiServerDouble; manifests: string; base: string }): void | Promise<void>;
}

export interface JoinedNode {
  node: string;
  base: string;
  rootDir: string;
  cgroupRoot: string;
  manifests: string;
  /** The admin kubeconfig kubectl uses. */
  admin: string;
  ctd: TestContainerd;
  api: ApiServerDouble;
  agent: NodeAgent;
  /** kubectl as the cluster admin; throws with its stderr on a non-zero exit. */
  kubectl(...args: string[]): Promise<string>;
  /**
   * Writes `manifest` (YAML text, or an object as JSON) to <base>/<file> and applies it with kubectl,
   * without client-side validation: the double serves no OpenAPI document.
   */
  apply(file: string, manifest: string | object): Promise<string>;
  /** Stops the agent and the double; removes the node's pods, cgroups and files. `cleanPods` replaces the default pod removal. */
  stop(cleanPods?: () => Promise<void>): Promise<void>;
}

/** The paths a joined node of this name uses (known before it starts, e.g. for manifests). */
export function clusterPaths(name: string): { node: string; base: string; rootDir: string; cgroupRoot: string; manifests: string; admin: string } {
  const base = `/tmp/bunlet-${name}-${process.pid}`;
  return {
    node: `${name}-${process.pid}`,
    base,
    rootDir: join(base, "root"),
    cgroupRoot: `/bunlet-${name}-${process.pid}`,
    manifests: join(base, "manifests"),
    admin: join(base, "admin.kubeconfig"),
  };
}

/** Joins a bunlet to a fresh API-server double; see the file header. */
export async function joinDouble(o: JoinOpts): Promise<JoinedNode> {
  const p = clusterPaths(o.name);
  mkdirSync(p.manifests, { recursive: true });
  const ctd = await acquireContainerd();
  let api: ApiServerDouble | undefined;
  let agent: NodeAgent | undefined;
  const stop = async (cleanPods?: () => Promise<void>) => {
    await agent?.stop();
    await api?.close();
    await tearDownPods(
      ctd,
      cleanPods ?? (async () => void (await removeNodePods(createKubeRuntime({ cri: ctd.cri, rootDir: p.rootDir }), p.node))),
      p.cgroupRoot,
      p.base,
    );
  };
  try {
    api = await startApiServer(o.api);
    await api.writeKubeconfig(p.admin, { token: api.adminToken });
    const kubeconfig = join(p.base, "kubelet.conf");
    const identity: string[] = [`--kubeconfig=${kubeconfig}`, `--cert-dir=${join(p.base, "pki")}`];
    if (o.identity === "bootstrap") {
      const bootstrap = join(p.base, "bootstrap-kubelet.conf");
      await api.writeKubeconfig(bootstrap, { token: api.bootstrapToken, user: "tls-bootstrap-token-user" });
      identity.push(`--bootstrap-kubeconfig=${bootstrap}`);
    } else {
      await api.writeKubeconfig(kubeconfig, { ...(await api.issueClientCert(`system:node:${p.node}`, ["system:nodes"])), user: "kubelet" });
    }
    await o.prepare?.({ ctd, api, manifests: p.manifests, base: p.base });
    const config = writeStaticPodConfig(
      join(p.base, "kubelet.yaml"),
      { manifests: p.manifests, endpoint: ctd.endpoint, cgroupRoot: p.cgroupRoot, podLogsDir: join(p.base, "logs"), port: o.port ?? freePort() },
      typeof o.config === "function" ? o.config(api) : (o.config ?? []),
    );
    const loaded = await loadConfig(["--config", config, `--hostname-override=${p.node}`, `--root-dir=${p.rootDir}`, ...identity, ...(o.flags ?? [])]);
    agent = createNodeAgent(loaded, { protectSelf: false });
    await agent.start();
  } catch (e) {
    await stop().catch(() => {});
    throw e;
  }
  const admin = p.admin;
  const base = p.base;
  const kubectl = async (...args: string[]) => {
    const proc = Bun.spawn(["kubectl", "--kubeconfig", admin, ...args], { stdout: "pipe", stderr: "pipe", env: { ...process.env, HOME: base } });
    const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    if (code !== 0) throw new Error(`kubectl ${args.join(" ")}: exit ${code}: ${err}`);
    return out;
  };
  return {
    ...p,
    ctd,
    api,
    agent,
    kubectl,
    async apply(file, manifest) {
      const path = join(base, file);
      await Bun.write(path, typeof manifest === "string" ? manifest : JSON.stringify(manifest));
      return kubectl("apply", "--validate=false", "-f", path);
    },
    stop,
  };
}

/**
 * A pod of busybox sleeping, bound to the node (spec.nodeName), as YAML: `spec` adds PodSpec fields
 * ("priorityClassName: x,"), `container` adds container fields (", resources: { … }").
 */
export function sleeperPodYaml(c: Pick<JoinedNode, "node" | "ctd">, name: string, spec = "", container = ""): string {
  return [
    "apiVersion: v1",
    "kind: Pod",
    `metadata: { name: ${name}, namespace: default }`,
    `spec: { nodeName: ${c.node}, terminationGracePeriodSeconds: 1, ${spec} containers: [{ name: c, image: "${c.ctd.images.busybox}", command: [sh, -c, "exec sleep 3600"]${container} }] }`,
  ].join("\n");
}
