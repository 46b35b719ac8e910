// Upstream's CSI controller sidecars — external-provisioner (csi-provisioner) and external-attacher
// (csi-attacher), built by scripts/upstream/build.sh — run as host processes as a cluster runs them in a
// driver's controller pod: each on the driver's controller socket (--csi-address) with a kubeconfig
// instead of a service account, no leader election (one replica). Their output is appended to
// <logDir>/<name>.log; stop() ends them with SIGTERM and waits for them.
import { mkdirSync, openSync } from "node:fs";
import { join } from "node:path";

export const CSI_SIDECARS = ["csi-provisioner", "csi-attacher"] as const;
export type CSISidecar = (typeof CSI_SIDECARS)[number];

export interface CSISidecarsOptions {
  /** Where the built sidecars are (upstreamBinDir with CSI_SIDECARS among the targets). */
  binDir: string;
  /** The driver's controller socket. */
  csiAddress: string;
  kubeconfig: string;
  logDir: string;
  /** Which sidecars to run (default both). */
  sidecars?: readonly CSISidecar[];
}

export interface CSISidecars {
  /** A sidecar's log so far (its klog lines), for a failure message. */
  log(name: CSISidecar): Promise<string>;
  stop(): Promise<void>;
}

/** Flags both take: a CSI call's timeout, and retries from 0.5 s backing off to 5 s (not upstream's 5 minutes). */
const FLAGS = ["--timeout=30s", "--retry-interval-start=500ms", "--retry-interval-max=5s", "--v=5"];

export function startCSISidecars(o: CSISidecarsOptions): CSISidecars {
  mkdirSync(o.logDir, { recursive: true });
  const names = o.sidecars ?? CSI_SIDECARS;
  const procs = names.map((name) => {
    const out = openSync(join(o.logDir, `${name}.log`), "a");
    const argv = [join(o.binDir, name), `--csi-address=${o.csiAddress}`, `--kubeconfig=${o.kubeconfig}`, ...FLAGS];
    return Bun.spawn(argv, { stdout: out, stderr: out });
  });
  return {
    log: (name) => Bun.file(join(o.logDir, `${name}.log`)).text(),
    async stop() {
      for (const p of procs) p.kill("SIGTERM");
      await Promise.all(procs.map((p) => p.exited));
    },
  };
}
