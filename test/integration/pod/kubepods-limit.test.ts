// Lowering kubepods memory.limit_in_bytes below its usage fails with EBUSY: the limit is read
// back, the failure reported with both figures, the write retried until the kernel takes it (after
// reclaim), and the "pods" allocatable computed against min(held, wanted). Real v1 memory cgroups.
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { log } from "../../../src/log.ts";
import { createPodCgroupManager } from "../../../src/pod/cm/container-manager.ts";
import { limitHeld } from "../../../src/pod/cm/node-container-manager.ts";
import { capPodsMemory, createNodeStatsProvider } from "../../../src/stats/node.ts";
import { canManageMemoryCgroups, makeMemoryCgroup, MEMORY_ROOT, removeCgroupTree, spawnMemoryHog } from "../../support/cgroup.ts";
import { pollUntil } from "../../support/wait.ts";

const MiB = 2 ** 20;
const testRoot = `/bunlet-test-limit-${process.pid}`;

describe("limitHeld / capPodsMemory", () => {
  test.each([
    [64 * MiB, String(64 * MiB), true],
    [64 * MiB + 100, String(64 * MiB), true], // v1 rounds down to a page
    [64 * MiB, String(1024 * MiB), false],
    [64 * MiB, "9223372036854771712", false],
    [64 * MiB, "", false],
  ] as const)("wanted %d, kernel %s → held %p", (wanted, held, want) => expect(limitHeld(wanted, held)).toBe(want));

  test("pods availableBytes: against the smaller of the kernel's limit and the wanted one", () => {
    const m = { time: "t", workingSetBytes: 100 * MiB, availableBytes: 924 * MiB };
    expect(capPodsMemory(m, 64 * MiB).availableBytes).toBe(0);
    expect(capPodsMemory(m, 200 * MiB).availableBytes).toBe(100 * MiB);
    expect(capPodsMemory(m, 4096 * MiB).availableBytes).toBe(924 * MiB);
    expect(capPodsMemory(m, undefined)).toBe(m);
  });
});

describe.skipIf(!canManageMemoryCgroups())("kubepods memory limit refused by the kernel (EBUSY)", () => {
  afterAll(() => {
    expect(removeCgroupTree(testRoot)).toEqual([]);
  });

  test("reported with what the kernel holds, eviction budgets against the wanted limit, retried until it sticks", async () => {
    const lines: string[] = [];
    const capture = { log: (o: { args: unknown[] }) => void lines.push(o.args.join(" ")) };
    log.addReporter(capture);
    const kubepods = join(MEMORY_ROOT, testRoot, "kubepods");
    mkdirSync(kubepods, { recursive: true });
    writeFileSync(join(kubepods, "memory.limit_in_bytes"), String(1024 * MiB)); // the old, larger limit
    const pod = makeMemoryCgroup({ root: kubepods, prefix: "podhog" });
    const hog = spawnMemoryHog(pod, 96);
    const m = createPodCgroupManager({
      mountRoot: "/sys/fs/cgroup",
      cgroupRoot: testRoot,
      controllers: ["memory"],
      kubepods: { memoryLimitBytes: 64 * MiB },
      limitRetryMs: 50,
    });
    try {
      await pollUntil(() => Number(readFileSync(join(kubepods, "memory.usage_in_bytes"), "utf8")) > 90 * MiB, "the hog holding 96 MiB");
      await m.setup();
      expect(m.kubepodsMemoryLimit()).toEqual({ wantedBytes: 64 * MiB, heldBytes: 1024 * MiB, applied: false });
      const text = lines.join("\n");
      expect(text).toContain("kubepods memory limit not applied: the kernel keeps its old limit");
      expect(text).toContain(`wanted=${64 * MiB} held=${1024 * MiB}`);
      expect(text).toContain("error=EBUSY");
      expect(text).toMatch(new RegExp(`QoS cgroups ready .*memoryLimit=${1024 * MiB} wantedMemoryLimit=${64 * MiB}`));

      // The eviction manager's "pods" container: never more room than the wanted budget.
      const stats = createNodeStatsProvider({
        rootDir: "/",
        podsCgroup: join(testRoot, "kubepods").slice(1),
        podsMemoryLimitBytes: () => m.kubepodsMemoryLimit()?.wantedBytes,
      });
      const pods = stats.nodeStats({ memoryOnly: true }).systemContainers![0]!.memory!;
      expect(pods.workingSetBytes!).toBeGreaterThan(64 * MiB);
      expect(pods.availableBytes).toBe(0);

      // Reclaim (the pod evicted): the retried write takes, the kernel holds the wanted limit.
      hog.kill("SIGKILL");
      await hog.exited;
      await pollUntil(() => m.kubepodsMemoryLimit()?.applied === true, "the retried limit applied");
      expect(readFileSync(join(kubepods, "memory.limit_in_bytes"), "utf8").trim()).toBe(String(64 * MiB));
      expect(lines.join("\n")).toContain(`kubepods memory limit applied after reclaim file=${join(kubepods, "memory.limit_in_bytes")} limit=${64 * MiB}`);
      const after = stats.nodeStats({ memoryOnly: true }).systemContainers![0]!.memory!;
      expect(after.availableBytes! + after.workingSetBytes!).toBe(64 * MiB);
    } finally {
      log.removeReporter(capture);
      m.close();
      hog.kill("SIGKILL");
      await pod.remove();
    }
    expect(existsSync(kubepods)).toBe(true);
  });
});
