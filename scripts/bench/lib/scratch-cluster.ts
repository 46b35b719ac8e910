// A throw-away cluster for benchmarks of the compiled agent in API-server mode: dist/bunlet (built first
// if stale), a private containerd and the API-server double (test/support), a temporary directory and a
// unique cgroup root. joinFlags() gives a node its files and identity under a directory of its own and
// returns the flags dist/bunlet joins with; close() — after the agents are stopped — stops the double,
// removes what `removePods` names (the agent leaves running pods running, as the kubelet does), the
// cgroup tree and the directory, and releases containerd.
// Used by api-pods.ts and join-ready.ts; a standalone node (static pods only): scratch-node.ts.
import { mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { staticPodFlags } from "../../../test/support/agent.ts";
import { startApiServer, type ApiServerDouble } from "../../../test/support/apiserver/index.ts";
import { ensureBuilt, freePort } from "../../../test/support/binary.ts";
import { acquireContainerd, tearDownPods, type TestContainerd } from "../../../test/support/containerd.ts";

export interface ScratchCluster {
  ctd: TestContainerd;
  api: ApiServerDouble;
  /** The temporary directory the nodes' files go under. */
  dir: string;
  cgroupRoot: string;
  /**
   * Writes the identity of node `node` under `root` — a kubeconfig with a client certificate for
   * system:node:<node>, or with `bootstrap` a bootstrap kubeconfig with the bootstrap token (TLS
   * bootstrap) — and returns its flags: static pods from <root>/manifests, a free port, --kubeconfig, --cert-dir.
   */
  joinFlags(root: string, node: string, opts?: { bootstrap?: boolean }): Promise<string[]>;
  close(removePods?: () => Promise<void>): Promise<void>;
}

/** `label` names the temporary directory and cgroup root (bunlet-bench-<label>-<pid>). */
export async function createScratchCluster(label: string): Promise<ScratchCluster> {
  await ensureBuilt();
  const ctd = await acquireContainerd();
  const api = await startApiServer();
  const dir = mkdtempSync(join(tmpdir(), `bunlet-bench-${label}-${process.pid}-`));
  const cgroupRoot = `/bunlet-bench-${label}-${process.pid}`;
  return {
    ctd,
    api,
    dir,
    cgroupRoot,
    async joinFlags(root, node, opts = {}) {
      const manifests = join(root, "manifests");
      mkdirSync(manifests, { recursive: true });
      const kubeconfig = join(root, "kubelet.conf");
      const flags = [
        ...staticPodFlags({ rootDir: join(root, "root"), manifests, cgroupRoot, endpoint: ctd.endpoint, node, port: freePort() }),
        `--kubeconfig=${kubeconfig}`,
        `--cert-dir=${join(root, "pki")}`,
      ];
      if (opts.bootstrap) {
        await api.writeKubeconfig(join(root, "bootstrap.conf"), { token: api.bootstrapToken });
        flags.push(`--bootstrap-kubeconfig=${join(root, "bootstrap.conf")}`);
      } else {
        await api.writeKubeconfig(kubeconfig, await api.issueClientCert(`system:node:${node}`, ["system:nodes"]));
      }
      return flags;
    },
    async close(removePods = async () => {}) {
      await api.close();
      await tearDownPods(ctd, removePods, cgroupRoot, dir);
    },
  };
}
