// The summary provider against a real cgroup v1 hierarchy: a pod cgroup in the memory, cpuacct and
// pids controllers with a process holding ~50 MiB, cross-checked against the kernel's own files.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createNodeStatsProvider } from "../../../src/stats/node.ts";
import { createSummaryProvider } from "../../../src/stats/summary-provider.ts";
import type { PodLike } from "../../../src/pod/pod-like.ts";
import { canManageMemoryCgroups, removeCgroup } from "../../support/cgroup.ts";

const MOUNT = "/sys/fs/cgroup";
const CONTROLLERS = ["memory", "cpuacct", "pids"] as const;
const TEST_ROOT = `bunlet-test-${process.pid}-summary`;
const UID = `stats-${process.pid}-0000-0000-000000000001`;
const POD_REL = `${TEST_ROOT}/kubepods/besteffort/pod${UID}`;
const LEVELS = [TEST_ROOT, `${TEST_ROOT}/kubepods`, `${TEST_ROOT}/kubepods/besteffort`, POD_REL];
const HOLD_MIB = 50;

const usable = canManageMemoryCgroups() && CONTROLLERS.every((c) => existsSync(join(MOUNT, c, "cgroup.procs")));
const perl = existsSync("/usr/bin/perl");

let child: Bun.Subprocess<"ignore", "pipe", "inherit"> | undefined;
let tmp: string | undefined;

async function cleanup() {
  if (child) {
    child.kill("SIGKILL");
    await child.exited;
    child = undefined;
  }
  // Deepest first in every controller; removeCgroup kills stragglers and retries while they exit.
  for (const c of CONTROLLERS) for (const rel of [...LEVELS].reverse()) await removeCgroup(join(MOUNT, c, rel));
  if (tmp) rmSync(tmp, { recursive: true, force: true });
  tmp = undefined;
}

describe.skipIf(!usable || !perl)("pod stats on a real cgroup v1 hierarchy", () => {
  beforeAll(async () => {
    tmp = mkdtempSync(join(tmpdir(), `bunlet-stats-it-${process.pid}-`));
    for (const c of CONTROLLERS) for (const rel of LEVELS) mkdirSync(join(MOUNT, c, rel), { recursive: true });
    // A limit on the test root: a runaway child can never pressure the host.
    writeFileSync(join(MOUNT, "memory", TEST_ROOT, "memory.limit_in_bytes"), String(256 * 1024 * 1024));
    // The shell joins the pod cgroup in every controller before anything is allocated (v1 charges
    // pages where they are first touched), starts a second process there, then becomes perl.
    const join_ = CONTROLLERS.map((c) => `echo $$ > ${join(MOUNT, c, POD_REL, "cgroup.procs")}`).join(" && ");
    const hold = `$x = "a" x (${HOLD_MIB} * 1048576); $| = 1; print "ready\\n"; sleep 600;`;
    child = Bun.spawn(["sh", "-c", `${join_} && (sleep 600 &) && exec perl -e '${hold}'`], { stdin: "ignore", stdout: "pipe", stderr: "inherit" });
    const reader = child.stdout.getReader();
    const first = await Promise.race([reader.read(), Bun.sleep(15_000).then(() => ({ value: undefined }))]);
    reader.releaseLock();
    if (!first.value || !new TextDecoder().decode(first.value).includes("ready")) throw new Error("memory holder did not start within 15 s");
  });
  afterAll(cleanup);

  const pod: PodLike = { metadata: { name: "hog", namespace: "default", uid: UID }, spec: { containers: [{ name: "hog" }] } };

  const makeProvider = () =>
    createSummaryProvider({
      nodeName: "it-node",
      nodeStats: createNodeStatsProvider({ rootDir: tmp!, podsCgroup: `${TEST_ROOT}/kubepods` }).nodeStats,
      activePods: () => [pod],
      podCgroupPath: () => POD_REL,
      rootDir: tmp!,
      podLogsDir: join(tmp!, "logs"),
      minCpuWindowMs: 10,
    });

  test("workingSetBytes matches memory.usage_in_bytes − total_inactive_file; process_count matches pids.current", async () => {
    const provider = makeProvider();
    const s = await provider.summary();
    const memDir = join(MOUNT, "memory", POD_REL);
    const usage = Number(readFileSync(join(memDir, "memory.usage_in_bytes"), "utf8"));
    const inactive = Number(/^total_inactive_file (\d+)$/m.exec(readFileSync(join(memDir, "memory.stat"), "utf8"))![1]);
    const ps = s.pods.find((p) => p.podRef.uid === UID)!;
    const ws = ps.memory!.workingSetBytes!;
    // Read a moment apart: allow 2 MiB of drift, but the ~50 MiB must be there.
    expect(Math.abs(ws - (usage - inactive))).toBeLessThan(2 * 1024 * 1024);
    expect(ws).toBeGreaterThan(HOLD_MIB * 1024 * 1024);
    expect(ps.memory!.rssBytes!).toBeGreaterThan(HOLD_MIB * 1024 * 1024);

    const pidsCurrent = Number(readFileSync(join(MOUNT, "pids", POD_REL, "pids.current"), "utf8"));
    const procs = readFileSync(join(memDir, "cgroup.procs"), "utf8").split("\n").filter(Boolean).length;
    expect(procs).toBe(2); // perl + sleep, both single-threaded
    expect(ps.process_stats?.process_count).toBe(pidsCurrent);
    expect(ps.process_stats?.process_count).toBe(2);

    // The kubepods cgroup (the pods system container) contains the pod.
    const podsSys = s.node.systemContainers?.find((c) => c.name === "pods");
    expect(podsSys?.memory?.workingSetBytes).toBeGreaterThanOrEqual(HOLD_MIB * 1024 * 1024);
    expect(s.node.nodeName).toBe("it-node");
    expect(ps["ephemeral-storage"]?.capacityBytes).toBe(s.node.fs!.capacityBytes!);
  });

  test("cpu: cumulative usage from cpuacct.usage, a rate once two samples exist", async () => {
    const provider = makeProvider();
    const first = (await provider.summary()).pods[0]!.cpu!;
    const direct = Number(readFileSync(join(MOUNT, "cpuacct", POD_REL, "cpuacct.usage"), "utf8"));
    expect(first.usageCoreNanoSeconds).toBeGreaterThan(0);
    expect(first.usageCoreNanoSeconds!).toBeLessThanOrEqual(direct);
    expect(first.usageNanoCores).toBeUndefined();
    // Poll until the 10 ms minimum window has passed between two samples (bounded).
    let rate: number | undefined;
    const deadline = Date.now() + 5000;
    while (rate === undefined && Date.now() < deadline) {
      await Bun.sleep(20);
      rate = (await provider.summary()).pods[0]!.cpu?.usageNanoCores;
    }
    expect(rate).toBeGreaterThanOrEqual(0);
  });
});
