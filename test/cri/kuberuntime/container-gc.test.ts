// Periodic container GC plan (src/pod/kuberuntime/container-gc.ts), upstream's policy on plain data.
import { describe, expect, test } from "bun:test";
import type { Container, PodSandbox } from "../../../src/cri/types.ts";
import { existsSync, mkdirSync, mkdtempSync, rmSync, utimesSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CriClient } from "../../../src/cri/client.ts";
import { DEFAULT_CONTAINER_GC_POLICY, planContainerGc, podUidFromLogsDirectory, runContainerGc } from "../../../src/pod/kuberuntime/container-gc.ts";
import { CONTAINER_NAME_LABEL, POD_UID_LABEL } from "../../../src/pod/kuberuntime/labels.ts";

const NOW = 1_000_000;
const c = (id: string, uid: string, name: string, state: Container["state"], createdMs: number, sandbox = `sb-${uid}`): Container => ({
  id,
  podSandboxId: sandbox,
  metadata: { name, attempt: 0 },
  image: null,
  imageRef: "",
  state,
  createdAt: createdMs * 1e6,
  labels: { [POD_UID_LABEL]: uid, [CONTAINER_NAME_LABEL]: name },
  annotations: {},
  imageId: "",
});
const sb = (id: string, uid: string, ready: boolean, createdMs: number): PodSandbox => ({
  id,
  metadata: { name: "p", namespace: "d", uid, attempt: 0 },
  state: ready ? "SANDBOX_READY" : "SANDBOX_NOTREADY",
  createdAt: createdMs * 1e6,
  labels: { [POD_UID_LABEL]: uid },
  annotations: {},
  runtimeHandler: "",
});
const live = { contentRemovable: () => false, allSourcesReady: true };
const gone = (...uids: string[]) => ({ contentRemovable: (u: string) => uids.includes(u), allSourcesReady: true });

describe("planContainerGc", () => {
  test("a crash loop keeps only its newest dead container per name; running ones are never touched", () => {
    const list = [
      c("d1", "u", "app", "CONTAINER_EXITED", 1),
      c("d2", "u", "app", "CONTAINER_EXITED", 2),
      c("d3", "u", "app", "CONTAINER_EXITED", 3),
      c("r4", "u", "app", "CONTAINER_RUNNING", 4),
      c("s1", "u", "side", "CONTAINER_EXITED", 1),
    ];
    expect(planContainerGc(list, [sb("sb-u", "u", true, 0)], DEFAULT_CONTAINER_GC_POLICY, live, NOW)).toEqual({ containers: ["d2", "d1"], sandboxes: [] });
  });

  test.each([
    ["MinAge keeps young dead containers", { minAgeMs: NOW - 2.5 }, ["d1"]],
    ["MaxPerPodContainer 2", { maxPerPodContainer: 2 }, ["d1"]],
    ["MaxPerPodContainer -1 (no limit)", { maxPerPodContainer: -1 }, []],
    ["MaxContainers 1 globally", { maxPerPodContainer: -1, maxContainers: 1 }, ["d2", "d1"]],
  ])("%s", (_n, policy, want) => {
    const list = [c("d1", "u", "app", "CONTAINER_EXITED", 1), c("d2", "u", "app", "CONTAINER_EXITED", 2), c("d3", "u", "app", "CONTAINER_EXITED", 3)];
    expect(planContainerGc(list, [], { ...DEFAULT_CONTAINER_GC_POLICY, ...policy }, live, NOW).containers.sort()).toEqual([...want].sort());
  });

  test("MaxContainers: an equal share per (pod, name) first, then the oldest overall", () => {
    const list = [
      c("a1", "u", "a", "CONTAINER_EXITED", 1),
      c("a2", "u", "a", "CONTAINER_EXITED", 2),
      c("a3", "u", "a", "CONTAINER_EXITED", 3),
      c("b1", "u", "b", "CONTAINER_EXITED", 4),
    ];
    // 3 allowed over 2 units: share 1 each → a3, b1 kept.
    expect(planContainerGc(list, [], { minAgeMs: 0, maxPerPodContainer: -1, maxContainers: 3 }, live, NOW).containers.sort()).toEqual(["a1", "a2"]);
    // 1 allowed: share 1 each, then the oldest (a3) goes too.
    expect(planContainerGc(list, [], { minAgeMs: 0, maxPerPodContainer: -1, maxContainers: 1 }, live, NOW).containers.sort()).toEqual(["a1", "a2", "a3"]);
  });

  test("a removed pod loses every dead container and every dead sandbox", () => {
    const list = [c("d1", "u", "app", "CONTAINER_EXITED", 1), c("o1", "other", "app", "CONTAINER_EXITED", 1)];
    const sandboxes = [sb("sb-u", "u", false, 1), sb("sb-u0", "u", false, 0), sb("sb-other", "other", false, 1)];
    expect(planContainerGc(list, sandboxes, DEFAULT_CONTAINER_GC_POLICY, gone("u"), NOW)).toEqual({ containers: ["d1"], sandboxes: ["sb-u", "sb-u0"] });
  });

  test("until every source is ready, an unknown pod is not removed", () => {
    const list = [c("d1", "u", "app", "CONTAINER_EXITED", 1)];
    expect(planContainerGc(list, [sb("sb-u", "u", false, 1)], DEFAULT_CONTAINER_GC_POLICY, { ...gone("u"), allSourcesReady: false }, NOW)).toEqual({
      containers: [],
      sandboxes: [],
    });
  });

  test("a live pod keeps its newest sandbox; older dead ones without containers go, a ready one or one holding a container stays", () => {
    const sandboxes = [sb("new", "u", false, 5), sb("old-ready", "u", true, 4), sb("old-holding", "u", false, 3), sb("old-empty", "u", false, 2)];
    const list = [c("x", "u", "app", "CONTAINER_RUNNING", 3, "old-holding")];
    expect(planContainerGc(list, sandboxes, DEFAULT_CONTAINER_GC_POLICY, live, NOW).sandboxes).toEqual(["old-empty"]);
  });

  test("containers without a kubelet's pod UID label are not ours", () => {
    const foreign = { ...c("f", "u", "app", "CONTAINER_EXITED", 1), labels: {} };
    expect(planContainerGc([foreign], [], DEFAULT_CONTAINER_GC_POLICY, gone("u"), NOW).containers).toEqual([]);
  });

  test("pod UID from a log directory name", () => expect(podUidFromLogsDirectory("kube-system_etcd-node_1234-abcd")).toBe("1234-abcd"));
});

describe("pod log directories", () => {
  test("removed for gone pods this runtime held, or untouched for an hour; a fresh unknown one (another agent's) stays", async () => {
    const root = mkdtempSync(join(tmpdir(), "bunlet-gc-logs-"));
    try {
      for (const d of ["d_held_u-held", "d_fresh_u-fresh", "d_old_u-old", "d_live_u-live"]) mkdirSync(join(root, d, "app"), { recursive: true });
      const old = (Date.now() - 2 * 3_600_000) / 1000;
      for (const p of ["d_old_u-old/app", "d_old_u-old"]) utimesSync(join(root, p), old, old);
      let listing: Container[] = [c("x", "u-held", "app", "CONTAINER_EXITED", 1)];
      const cri = {
        listContainers: async () => listing,
        listPodSandbox: async () => [],
        containerStatus: async () => ({ status: null }),
        removeContainer: async () => {},
        removePodSandbox: async () => {},
      } as unknown as CriClient;
      const seen = new Set<string>();
      const pods = { contentRemovable: (u: string) => u !== "u-live", allSourcesReady: true };
      // First pass: u-held's container is still listed, so its directory stays; it is now "seen".
      await runContainerGc(cri, DEFAULT_CONTAINER_GC_POLICY, { ...pods, contentRemovable: (u) => u !== "u-live" && u !== "u-held" }, root, Date.now(), seen);
      expect(existsSync(join(root, "d_held_u-held"))).toBe(true);
      listing = [];
      await runContainerGc(cri, DEFAULT_CONTAINER_GC_POLICY, pods, root, Date.now(), seen);
      expect(existsSync(join(root, "d_held_u-held"))).toBe(false);
      expect(existsSync(join(root, "d_old_u-old"))).toBe(false);
      expect(existsSync(join(root, "d_fresh_u-fresh"))).toBe(true);
      expect(existsSync(join(root, "d_live_u-live"))).toBe(true);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
