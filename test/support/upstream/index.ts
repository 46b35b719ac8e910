// The upstream test bed: where its binaries are (scripts/upstream/build.sh builds them once per
// release, under /var/tmp), the real control plane and a bunlet joined to it.
import { spawnSync } from "node:child_process";
import { resolve } from "node:path";

export * from "./control-plane.ts";
export * from "./kubelet-config.ts";
export * from "./node.ts";
export * from "./objects.ts";
export * from "./summary.ts";
export * from "./workloads.ts";

const BUILD = resolve(import.meta.dir, "../../../scripts/upstream/build.sh");

/** The directory of the built upstream binaries, or undefined (with the reason) when they are not built. */
export function upstreamBinDir(targets = "kube-apiserver kube-controller-manager kube-scheduler kubectl"): { dir?: string; why?: string } {
  const r = spawnSync("bash", [BUILD, "--path"], { encoding: "utf8", env: { ...process.env, BUNLET_UPSTREAM_TARGETS: targets } });
  if (r.status === 0) return { dir: r.stdout.trim() };
  return { why: `the upstream binaries (${targets}) are not built: run scripts/upstream/build.sh (needs Go)` };
}

/**
 * Builds what is missing of `targets` (scripts/upstream/build.sh, its progress on stderr) and returns
 * the directory of the binaries, the last line it prints.
 */
export async function buildUpstream(targets: string): Promise<string> {
  const p = Bun.spawn(["bash", BUILD], { stdout: "pipe", stderr: "inherit", env: { ...process.env, BUNLET_UPSTREAM_TARGETS: targets } });
  const [out, code] = await Promise.all([new Response(p.stdout).text(), p.exited]);
  if (code !== 0) throw new Error(`scripts/upstream/build.sh (${targets}) failed with exit ${code}`);
  return out.trim().split("\n").pop()!;
}
