// `bash scripts/demo.sh --cluster --once` (machine test): the newcomer's tour of a real one-node cluster
// whose node is bunlet — the Deployment Running, the hog evicted and the reasons shown with kubectl —
// ends 0 and leaves no control plane, pod or cgroup behind.
import { expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { canRunContainerd } from "../../support/containerd.ts";
import { canFenceMemory, upstreamBinDir } from "../../support/upstream/index.ts";

const ROOT = resolve(import.meta.dir, "../../..");
const bin = upstreamBinDir();

test.skipIf(!canRunContainerd() || !bin.dir || !canFenceMemory)(
  "demo.sh --cluster --once: nodes and pods with kubectl, the hog Evicted with its events, everything removed",
  async () => {
    const dir = mkdtempSync(join(tmpdir(), "bunlet-demo-cluster-"));
    try {
      const p = Bun.spawn(["bash", "scripts/demo.sh", "--cluster", "--once"], {
        cwd: ROOT,
        stdout: "pipe",
        stderr: "pipe",
        env: { ...process.env, BUNLET_DEMO_CLUSTER_DIR: join(dir, "cp") },
      });
      const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
      expect({ code, tail: code === 0 ? "" : `${out.slice(-3000)}\n${err.slice(-3000)}` }).toEqual({ code: 0, tail: "" });
      expect(out).toMatch(/localhost\s+Ready\s/);
      expect(out).toMatch(/web-\S+\s+1\/1\s+Running/);
      expect(out).toContain("MemoryPressure=True KubeletHasInsufficientMemory");
      expect(out).toMatch(/Warning\s+Evicted\s+hog\s+The node was low on resource: memory\./);
      expect(out).toMatch(/Warning\s+EvictionThresholdMet\s+localhost\s+Attempting to reclaim memory/);
      expect(out).toContain("DisruptionTarget=True TerminationByKubelet");
      expect(out).toMatch(/steady\s+1\/1\s+Running/);
      // Nothing left: the control plane's processes (its pids file) and the node's cgroups.
      expect(existsSync(join(dir, "cp"))).toBe(false);
      expect(readdirSync("/sys/fs/cgroup/memory").filter((d) => d.startsWith("bunlet-demo-cluster-"))).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
  300_000,
);
