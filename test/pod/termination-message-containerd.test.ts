// machine test: root and a private containerd (test/support/containerd.ts)
// terminationMessagePath / terminationMessagePolicy on a real containerd (private instance from
// test/support): static pods whose busybox container writes its termination log (default path, and a
// custom path as a non-root user) or only its stdout/stderr (FallbackToLogsOnError), then exits; the
// pod status carries the message as upstream's kubelet reports it; the host files go with the pod.
// Skipped when not root.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createPodCgroupManager } from "../../src/pod/cm/container-manager.ts";
import { createKubeRuntime } from "../../src/pod/kuberuntime/manager.ts";
import { createPodLifecycle } from "../../src/pod/lifecycle.ts";
import type { PodLifecycle } from "../../src/pod/lifecycle-types.ts";
import type { Runtime } from "../../src/pod/runtime.ts";
import type { ContainerStateTerminated } from "../../src/pod/types.ts";
import { acquireContainerd, canRunContainerd, removeNodePods, tearDownPods, type TestContainerd } from "../support/containerd.ts";
import { staticPodYaml } from "../support/manifests.ts";
import { until } from "../support/wait.ts";

const PID = process.pid;
const CGROUP_ROOT = `/bunlet-tm-${PID}`;
const BASE = `/tmp/bunlet-tm-${PID}`;
const MANIFESTS = join(BASE, "manifests");
const ROOT = join(BASE, "root");
const NODE = "tmnode";

/** A pod that runs `script` once (restartPolicy Never), with extra container YAML lines. */
const manifest = (name: string, script: string, container = "") =>
  staticPodYaml(name, { image: "bunlet.local/busybox:1", command: ["sh", "-c", script], terminationGracePeriodSeconds: 2, container }).replace(
    "spec:\n",
    "spec:\n  restartPolicy: Never\n",
  );

describe.skipIf(!canRunContainerd())("termination messages on containerd", () => {
  let ctd: TestContainerd;
  let rt: Runtime;
  let lc: PodLifecycle;
  const pod = (name: string) => lc.listPodsForApi().find((p) => p.metadata.name === `${name}-${NODE}`);
  /** The main container's terminated state once the pod is terminal. */
  const terminated = (name: string): Promise<ContainerStateTerminated> =>
    until(`${name} terminated`, () => {
      const st = pod(name)?.status;
      const c = st?.containerStatuses?.[0];
      return (st?.phase === "Failed" || st?.phase === "Succeeded") && c?.state.terminated ? c.state.terminated : undefined;
    });

  beforeAll(async () => {
    ctd = await acquireContainerd();
    mkdirSync(MANIFESTS, { recursive: true });
    rt = createKubeRuntime({ cri: ctd.cri, podLogsDir: join(BASE, "logs"), rootDir: ROOT });
    lc = createPodLifecycle({
      runtime: rt,
      cgroups: createPodCgroupManager({ cgroupRoot: CGROUP_ROOT, podPidsLimit: 256 }),
      config: { nodeName: NODE, hostIP: "127.0.0.1", staticPodPath: MANIFESTS, fileCheckFrequencyMs: 20_000, syncFrequencyMs: 60_000, errorRetryMs: 1_000 },
    });
    await lc.start();
  }, 600_000);

  afterAll(async () => {
    await lc?.stop();
    await tearDownPods(ctd, () => removeNodePods(rt, NODE), CGROUP_ROOT, BASE);
  }, 120_000);

  test("a message written to /dev/termination-log is the terminated state's message", async () => {
    writeFileSync(join(MANIFESTS, "broke.yaml"), manifest("broke", "printf 'it broke: disk on fire' > /dev/termination-log; echo noise; exit 1"));
    const t = await terminated("broke");
    expect(t).toMatchObject({ exitCode: 1, reason: "Error", message: "it broke: disk on fire" });
    // The host file the message came from, one per container instance, under the pod directory.
    const uid = pod("broke")!.metadata.uid!;
    const dir = join(ROOT, "pods", uid, "containers", "main");
    expect(readdirSync(dir)).toHaveLength(1);
    expect(readdirSync(dir)[0]).toMatch(/^[0-9a-f]{8}$/);
  }, 120_000);

  test("a custom path written by a non-root user, on success too; only the last 4 KiB", async () => {
    const script = "i=0; while [ $i -lt 100 ]; do printf '%063d\\n' $i; i=$((i+1)); done > /tmp/why; printf END >> /tmp/why";
    writeFileSync(
      join(MANIFESTS, "custom.yaml"),
      manifest("custom", script, "      terminationMessagePath: /tmp/why\n      securityContext: { runAsUser: 1000, runAsGroup: 1000 }\n"),
    );
    const t = await terminated("custom");
    expect(t.exitCode).toBe(0);
    expect(t.reason).toBe("Completed");
    // 100 lines of 64 bytes + "END": the file's last 4096 bytes.
    expect(Buffer.byteLength(t.message!)).toBe(4096);
    expect(t.message!.endsWith(`${"0".repeat(61)}99\nEND`)).toBe(true);
  }, 120_000);

  test("FallbackToLogsOnError: a failed container that left the file empty gets its log tail", async () => {
    // One stream (stderr onto stdout): containerd copies stdout and stderr through separate pipes, so
    // lines of the two may reach the log in either order, or the last one after the exit is reported.
    const script = "exec 2>&1; i=1; while [ $i -le 100 ]; do echo line$i; i=$((i+1)); done; echo 'fatal: oops' >&2; exit 2";
    writeFileSync(join(MANIFESTS, "fallback.yaml"), manifest("fallback", script, "      terminationMessagePolicy: FallbackToLogsOnError\n"));
    const t = await terminated("fallback");
    expect(t.exitCode).toBe(2);
    // The last 80 log lines: line22 … line100 and the stderr line.
    const want = `${Array.from({ length: 79 }, (_, i) => `line${i + 22}`).join("\n")}\nfatal: oops\n`;
    expect(t.message).toBe(want);
  }, 120_000);

  test("FallbackToLogsOnError: the file wins when written; a success reads no logs", async () => {
    writeFileSync(
      join(MANIFESTS, "fbfile.yaml"),
      manifest("fbfile", "echo log; printf 'from file' > /dev/termination-log; exit 3", "      terminationMessagePolicy: FallbackToLogsOnError\n"),
    );
    writeFileSync(join(MANIFESTS, "fbok.yaml"), manifest("fbok", "echo all good", "      terminationMessagePolicy: FallbackToLogsOnError\n"));
    expect((await terminated("fbfile")).message).toBe("from file");
    const ok = await terminated("fbok");
    expect(ok.exitCode).toBe(0);
    expect(ok.message).toBeUndefined();
  }, 120_000);

  test("the termination-log files go with the pod", async () => {
    const uid = pod("broke")!.metadata.uid!;
    const dir = join(ROOT, "pods", uid, "containers");
    expect(existsSync(dir)).toBe(true);
    unlinkSync(join(MANIFESTS, "broke.yaml"));
    await until("broke removed", async () => (await rt.getPods(true)).every((p) => p.uid !== uid) || undefined, 60_000);
    await until("its termination-log files removed", () => !existsSync(dir) || undefined, 60_000);
  }, 120_000);
});
