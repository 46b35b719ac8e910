import { afterAll, afterEach, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { lstat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ConsolaReporter } from "consola/core";
import { log } from "../../src/log.ts";
import { createOrphanedPodDirs, nodePodDirsFs, orphanedPodUids, orphanVerdict, type PodDirsFs } from "../../src/pod/orphaned-pod-dirs.ts";
import { removalStep } from "../../src/pod/volumes/removeall.ts";

const stat = (kind: "dir" | "file" | "symlink", dev = 1) => ({ dev, isDirectory: () => kind === "dir", isSymbolicLink: () => kind === "symlink" });

test.each([
  ["a file is unlinked", stat("file"), 1, false, "unlink"],
  ["a symlink is unlinked, never followed", stat("symlink"), 1, false, "unlink"],
  ["a directory on its parent's device is descended", stat("dir"), 1, false, "descend"],
  ["a directory on another device is a mount point", stat("dir", 2), 1, false, "mount-point"],
  ["a directory mountinfo lists is a mount point (a bind mount keeps st_dev)", stat("dir"), 1, true, "mount-point"],
  ["a file mountinfo lists (a file bind mount) is left", stat("file"), 1, true, "mount-point"],
] as const)("removalStep: %s", (_what, st, parentDev, listed, step) => {
  expect(removalStep(st, parentDev, listed)).toBe(step);
});

test.each([
  ["no mount, no CSI data: removed", [], 0, true, undefined, "remove"],
  ["a mount left, teardown available: torn down first", ["/r/pods/u/volumes/kubernetes.io~empty-dir/m"], 0, true, undefined, "tear-down"],
  ["a mount left after the teardown: kept", ["/r/pods/u/volumes/kubernetes.io~csi/pv/mount"], 1, false, "", "keep"],
  ["a mount left without a teardown: kept", ["/r/pods/u/volumes/kubernetes.io~csi/pv/mount"], 1, false, undefined, "keep"],
  ["CSI data, nothing mounted: torn down by the driver first", [], 2, true, undefined, "tear-down"],
  ["CSI data without a teardown: removed", [], 1, false, undefined, "remove"],
  ["nothing mounted after a teardown that failed: kept", [], 0, false, "driver not registered", "keep"],
  ["nothing mounted after a teardown that succeeded: removed", [], 0, false, "", "remove"],
] as const)("orphanVerdict: %s", (_what, mountedPaths, csiVolumeData, tearDown, tearDownError, action) => {
  expect(orphanVerdict({ mountedPaths, csiVolumeData, tearDown, tearDownError: tearDownError || undefined }).action).toBe(action);
});

test("orphanVerdict: raw block volumes (device links), nothing mounted: torn down first (their global map files and loop devices)", () => {
  expect(orphanVerdict({ mountedPaths: [], csiVolumeData: 0, blockVolumes: 1, tearDown: true }).action).toBe("tear-down");
  expect(orphanVerdict({ mountedPaths: [], csiVolumeData: 0, blockVolumes: 1, tearDown: false }).action).toBe("remove");
});

test("orphanedPodUids: the unwanted directories whose names can be pod UIDs", () => {
  const wanted = new Set(["a"]);
  expect(orphanedPodUids(["a", "b", "..x", "c"], (u) => wanted.has(u))).toEqual(["b", "c"]);
});

describe("createOrphanedPodDirs on a directory tree", () => {
  // Canonical, as mountinfo names paths.
  const base = realpathSync(mkdtempSync(join(tmpdir(), "bunlet-orphans-")));
  let rootDir: string;
  let pods: string;
  let mountinfo = "";
  const lines: string[] = [];
  const capture: ConsolaReporter = { log: (o) => void lines.push(o.args.map(String).join(" ")) };
  const fs: PodDirsFs = { ...nodePodDirsFs, mountInfo: async () => mountinfo };
  const mountLine = (path: string) => `36 35 0:40 / ${path} rw,relatime shared:1 - tmpfs tmpfs rw\n`;
  const nothingRunning = async () => new Set<string>();

  /** <pods>/<uid>/<rel> with `text`. */
  const file = (uid: string, rel: string, text = "x") => {
    const p = join(pods, uid, rel);
    mkdirSync(join(p, ".."), { recursive: true });
    writeFileSync(p, text);
    return p;
  };

  beforeEach(() => {
    rootDir = mkdtempSync(join(base, "root-"));
    pods = join(rootDir, "pods");
    mountinfo = "";
    lines.length = 0;
    log.addReporter(capture);
  });
  afterEach(() => log.removeReporter(capture));
  afterAll(() => rmSync(base, { recursive: true, force: true }));

  test("an orphan's directory with files goes; wanted and running pods' stay; a symlink out of it is not followed", async () => {
    const outside = join(base, "outside");
    mkdirSync(outside, { recursive: true });
    writeFileSync(join(outside, "keep"), "data");
    file("orphan", "containers/app/0");
    file("orphan", "etc-hosts");
    file("orphan", "volumes/kubernetes.io~empty-dir/cache/f");
    symlinkSync(outside, join(pods, "orphan", "volumes", "kubernetes.io~empty-dir", "cache", "escape"));
    file("wanted", "etc-hosts");
    file("running", "etc-hosts");
    const r = await createOrphanedPodDirs({ rootDir, fs }).cleanup(
      (u) => u === "wanted",
      async () => new Set(["running"]),
    );
    expect(r).toEqual({ orphans: 1, errors: 0, removed: ["orphan"] });
    expect(existsSync(join(pods, "orphan"))).toBe(false);
    expect(existsSync(join(pods, "wanted", "etc-hosts"))).toBe(true);
    expect(existsSync(join(pods, "running", "etc-hosts"))).toBe(true);
    expect(readFileSync(join(outside, "keep"), "utf8")).toBe("data");
    expect(lines.some((l) => l.includes("cleaned up orphaned pod directory") && l.includes("podUID=orphan"))).toBe(true);
  });

  test("the runtime is asked only when a directory looks orphaned; no pods directory is nothing to do", async () => {
    let listed = 0;
    const running = async () => {
      listed++;
      return new Set<string>();
    };
    const dirs = createOrphanedPodDirs({ rootDir, fs });
    expect(await dirs.cleanup(() => false, running)).toEqual({ orphans: 0, errors: 0, removed: [] });
    file("a", "etc-hosts");
    await dirs.cleanup(() => true, running);
    expect(listed).toBe(0);
    await dirs.cleanup(() => false, running);
    expect(listed).toBe(1);
  });

  test("an orphan with a volume still mounted stays, reported once while it stays so", async () => {
    const mount = join(pods, "held", "volumes", "kubernetes.io~csi", "pv", "mount");
    file("held", "volumes/kubernetes.io~csi/pv/mount/data");
    mountinfo = mountLine(mount);
    const dirs = createOrphanedPodDirs({ rootDir, fs });
    expect(await dirs.cleanup(() => false, nothingRunning)).toEqual({ orphans: 1, errors: 1, removed: [] });
    await dirs.cleanup(() => false, nothingRunning);
    const reports = lines.filter((l) => l.includes("orphaned pod found, but volumes are still mounted on disk"));
    expect(reports).toHaveLength(1);
    expect(reports[0]).toContain(`paths=${mount}`);
    expect(existsSync(join(mount, "data"))).toBe(true);
    // Unmounted: removed at the next pass.
    mountinfo = "";
    expect((await dirs.cleanup(() => false, nothingRunning)).removed).toEqual(["held"]);
  });

  test("a directory on another device (a mount mountinfo missed) is not descended into", async () => {
    const foreign = join(pods, "odd", "volumes", "kubernetes.io~local-volume", "pv");
    file("odd", "volumes/kubernetes.io~local-volume/pv/data");
    file("odd", "etc-hosts");
    const onOtherDev: PodDirsFs = {
      ...fs,
      lstat: async (p) => {
        const st = await lstat(p);
        return p === foreign ? { dev: st.dev + 1, isDirectory: () => true, isSymbolicLink: () => false } : st;
      },
    };
    const r = await createOrphanedPodDirs({ rootDir, fs: onOtherDev }).cleanup(() => false, nothingRunning);
    expect(r.errors).toBe(1);
    expect(existsSync(join(foreign, "data"))).toBe(true);
    expect(existsSync(join(pods, "odd", "etc-hosts"))).toBe(false); // what is on the pod's own filesystem goes
    expect(lines.some((l) => l.includes("error occurred when trying to remove the pod directory") && l.includes("it is a mount point"))).toBe(true);
  });

  test("CSI volume data is handed to the volume teardown first; a failing teardown keeps the directory", async () => {
    file("csi", "volumes/kubernetes.io~csi/pv/vol_data.json", "{}");
    const torn: string[] = [];
    let fail = true;
    const tearDownVolumes = async (uid: string) => {
      torn.push(uid);
      if (fail) throw new Error("driver name csi.example not found in the list of registered CSI drivers");
      rmSync(join(pods, uid, "volumes", "kubernetes.io~csi", "pv"), { recursive: true });
    };
    const dirs = createOrphanedPodDirs({ rootDir, fs, tearDownVolumes });
    expect((await dirs.cleanup(() => false, nothingRunning)).removed).toEqual([]);
    expect(existsSync(join(pods, "csi", "volumes", "kubernetes.io~csi", "pv", "vol_data.json"))).toBe(true);
    expect(lines.some((l) => l.includes("volumes are not torn down") && l.includes("csi.example"))).toBe(true);
    fail = false;
    expect((await dirs.cleanup(() => false, nothingRunning)).removed).toEqual(["csi"]);
    expect(torn).toEqual(["csi", "csi"]);
  });

  test("a CSI plugin directory that is a symlink is not handed to the teardown: the link goes, its target stays", async () => {
    const elsewhere = join(base, "elsewhere-csi");
    mkdirSync(join(elsewhere, "pv"), { recursive: true });
    writeFileSync(join(elsewhere, "pv", "vol_data.json"), "{}");
    file("linked", "etc-hosts");
    mkdirSync(join(pods, "linked", "volumes"));
    symlinkSync(elsewhere, join(pods, "linked", "volumes", "kubernetes.io~csi"));
    const torn: string[] = [];
    const r = await createOrphanedPodDirs({ rootDir, fs, tearDownVolumes: async (uid) => void torn.push(uid) }).cleanup(() => false, nothingRunning);
    expect(r.removed).toEqual(["linked"]);
    expect(torn).toEqual([]);
    expect(existsSync(join(elsewhere, "pv", "vol_data.json"))).toBe(true);
  });

  test("a pod that appears while the pass awaits the runtime keeps its directory", async () => {
    file("late", "etc-hosts");
    let appeared = false;
    const r = await createOrphanedPodDirs({ rootDir, fs }).cleanup(
      (u) => u === "late" && appeared,
      async () => {
        appeared = true;
        return new Set();
      },
    );
    expect(r.orphans).toBe(0);
    expect(lstatSync(join(pods, "late")).isDirectory()).toBe(true);
  });
});
