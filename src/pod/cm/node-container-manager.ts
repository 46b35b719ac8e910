// The kubepods limits: node allocatable enforced on the cgroup that holds every pod (upstream
// cm/node_container_manager_linux.go enforceNodeAllocatableCgroups), and its memory limit read back, so
// the eviction manager budgets against what the kernel holds. v1 refuses a memory limit below the usage
// (EBUSY): the refusal is reported with both figures and the write retried until reclaim lets it take.
// v2 takes such a limit and reclaims (or OOM-kills) toward it: it is written with the others and read
// back once.
import { join } from "node:path";
import { kv, log } from "../../log.ts";
import type { ResourceConfig } from "../cgroups-config.ts";
import type { CgroupManager } from "./cgroup-manager.ts";

/** The kubepods memory limit bunlet wants and the one the kernel holds (read back after each write). */
export interface KubepodsMemoryLimit {
  wantedBytes: number;
  heldBytes?: number;
  /** The kernel holds the wanted limit (to the page: v1 rounds down to a page multiple). */
  applied: boolean;
}

const PAGE = 4096;
/** v1 stores limits rounded down to a page; "max" / 9223372036854771712 is unlimited. */
export function limitHeld(wantedBytes: number, heldText: string): boolean {
  const held = Number(heldText.trim());
  return Number.isFinite(held) && held <= wantedBytes && wantedBytes - held < PAGE;
}

export interface NodeContainerManager {
  /** Writes the kubepods limits (after kubepods is made) and reads the memory limit back. */
  enforceNodeAllocatable(): Promise<void>;
  /** undefined before enforceNodeAllocatable or without a kubepods memory limit. */
  memoryLimit(): KubepodsMemoryLimit | undefined;
  /** The memory limit as the "QoS cgroups ready" line names it. */
  readyFields(): { memoryLimit?: number; wantedMemoryLimit?: number };
  /** Stops the retry of a refused limit. */
  close(): void;
}

const KUBEPODS = ["kubepods"];

export function createNodeContainerManager(
  cgroups: CgroupManager,
  opts: {
    /** kubepods limits (from kubepodsResourceConfig). */
    kubepods?: ResourceConfig;
    /** How often a kubepods memory limit the kernel refused (v1: EBUSY, usage above it) is retried; default 10 s. */
    limitRetryMs?: number;
  },
): NodeContainerManager {
  const retryMs = opts.limitRetryMs ?? 10_000;
  const wanted = opts.kubepods?.memoryLimitBytes;
  const file = () => join(cgroups.dir("memory", KUBEPODS), cgroups.memoryFiles.limit);
  let held: KubepodsMemoryLimit | undefined;
  let retryTimer: ReturnType<typeof setTimeout> | undefined;
  let closed = false;

  async function readBack(wantedBytes: number): Promise<string> {
    const heldText = (await cgroups.read("memory", KUBEPODS, cgroups.memoryFiles.limit)) ?? "";
    const heldBytes = Number(heldText.trim());
    held = { wantedBytes, heldBytes: heldText && Number.isFinite(heldBytes) ? heldBytes : undefined, applied: limitHeld(wantedBytes, heldText) };
    return heldText;
  }

  /** v1: the memory limit alone, read back; a refusal logged once and retried until it takes. */
  async function applyRefusable(wantedBytes: number, first: boolean): Promise<void> {
    const failed = await cgroups.writeResources(KUBEPODS, { memoryLimitBytes: wantedBytes }, "kubepods");
    const was = held;
    await readBack(wantedBytes);
    if (!held!.applied && (first || was?.applied)) {
      const usage = await cgroups.read("memory", KUBEPODS, cgroups.memoryFiles.usage).then((t) => (t === undefined ? undefined : Number(t.trim())));
      log.error(
        `kubepods memory limit not applied: the kernel keeps its old limit; eviction works toward the wanted one and the write is retried every ${retryMs / 1000}s ${kv({ file: file(), wanted: wantedBytes, held: held!.heldBytes, usage, error: failed.get(cgroups.memoryFiles.limit) ?? "read back a different value" })}`,
      );
    } else if (held!.applied && was && !was.applied) log.info(`kubepods memory limit applied after reclaim ${kv({ file: file(), limit: held!.heldBytes })}`);
    if (!held!.applied && !closed) {
      retryTimer = setTimeout(
        () => void applyRefusable(wantedBytes, false).catch((e) => log.warn(`kubepods memory limit retry failed ${kv({ error: (e as Error).message })}`)),
        retryMs,
      );
      retryTimer.unref?.();
    }
  }

  return {
    async enforceNodeAllocatable() {
      if (cgroups.version === 2) {
        if (opts.kubepods) await cgroups.writeResources(KUBEPODS, opts.kubepods, "kubepods");
        if (wanted === undefined) return;
        const heldText = await readBack(wanted);
        if (!held!.applied) log.error(`kubepods memory limit not applied ${kv({ file: file(), wanted, held: heldText.trim() || undefined })}`);
        return;
      }
      if (opts.kubepods) await cgroups.writeResources(KUBEPODS, { ...opts.kubepods, memoryLimitBytes: undefined }, "kubepods");
      if (wanted !== undefined && cgroups.controllers().includes("memory")) await applyRefusable(wanted, true);
    },
    memoryLimit: () => held,
    // v1 names the wanted limit beside the held one while the kernel refuses it.
    readyFields: () =>
      cgroups.version === 2
        ? { memoryLimit: held?.heldBytes ?? wanted }
        : { memoryLimit: held?.heldBytes, wantedMemoryLimit: held && !held.applied ? held.wantedBytes : undefined },
    close() {
      closed = true;
      if (retryTimer) clearTimeout(retryTimer);
    },
  };
}
