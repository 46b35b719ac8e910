import { afterAll, afterEach, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ConsolaReporter } from "consola/core";
import { log } from "../../../src/log.ts";
import { createOrphanedPodDirs, nodePodDirsFs, type PodDirsFs } from "../../../src/pod/orphaned-pod-dirs.ts";
import { createOrphanVolumeTearDown, getVolumesFromPodDir, nodeOrphanVolumesFs, type OrphanVolumesFs } from "../../../src/pod/volumemanager/index.ts";

describe("orphan volume teardown over a directory tree and a fake mount table", () => {
  // Canonical, as mountinfo names paths.
  const base = realpathSync(mkdtempSync(join(tmpdir(), "bunlet-orphan-volumes-")));
  let pods: string;
  let rootDir: string;
  let mounted: Set<string>;
  let unmounted: string[];
  const lines: string[] = [];
  const capture: ConsolaReporter = { log: (o) => void lines.push(o.args.map(String).join(" ")) };
  const mountinfo = async () => [...mounted].map((p, i) => `${40 + i} 35 0:${40 + i} / ${p} rw shared:1 - tmpfs tmpfs rw\n`).join("");
  const volFs: OrphanVolumesFs = {
    ...nodeOrphanVolumesFs,
    mountInfo: mountinfo,
    unmount: async (p) => {
      if (!mounted.delete(p)) throw new Error(`umount ${p}: EINVAL`);
      unmounted.push(p);
    },
  };
  const dirFs: PodDirsFs = { ...nodePodDirsFs, mountInfo: mountinfo };
  const dir = (uid: string, rel: string) => {
    const p = join(pods, uid, rel);
    mkdirSync(p, { recursive: true });
    return p;
  };
  const mount = (uid: string, rel: string) => mounted.add(dir(uid, rel));
  const nothingRunning = async () => new Set<string>();

  beforeEach(() => {
    rootDir = mkdtempSync(join(base, "root-"));
    pods = join(rootDir, "pods");
    mounted = new Set();
    unmounted = [];
    lines.length = 0;
    log.addReporter(capture);
  });
  afterEach(() => log.removeReporter(capture));
  afterAll(() => rmSync(base, { recursive: true, force: true }));

  test("getVolumesFromPodDir lists filesystem and block volumes; a symlinked plugin directory is skipped", async () => {
    dir("u", "volumes/kubernetes.io~empty-dir/cache");
    dir("u", "volumes/kubernetes.io~csi/pv");
    dir("u", "volumeDevices/kubernetes.io~local-volume");
    symlinkSync("/dev/null", join(pods, "u", "volumeDevices", "kubernetes.io~local-volume", "blk"));
    symlinkSync(base, join(pods, "u", "volumes", "kubernetes.io~secret"));
    const vols = await getVolumesFromPodDir(volFs, join(pods, "u"), "u");
    expect(vols.map((v) => [v.pluginName, v.volumeSpecName, v.volumeMode]).sort()).toEqual([
      ["kubernetes.io/csi", "pv", "Filesystem"],
      ["kubernetes.io/empty-dir", "cache", "Filesystem"],
      ["kubernetes.io/local-volume", "blk", "Block"],
    ]);
  });

  test("an orphan's tmpfs, bind and CSI volumes are torn down, then its directory goes; a wanted pod's stay mounted", async () => {
    mount("gone", "volumes/kubernetes.io~empty-dir/mem");
    mount("gone", "volumes/kubernetes.io~projected/kube-api-access");
    mount("gone", "volumes/kubernetes.io~local-volume/pv1");
    mount("gone", "volumes/kubernetes.io~csi/pv/mount");
    writeFileSync(join(pods, "gone", "volumes", "kubernetes.io~csi", "pv", "vol_data.json"), "{}");
    mount("kept", "volumes/kubernetes.io~empty-dir/mem");
    const csi: string[] = [];
    const subPaths: string[] = [];
    let devices = 0;
    const metrics = { reconstructed: [] as boolean[], forceCleaned: [] as boolean[] };
    const tearDownVolumes = createOrphanVolumeTearDown({
      fs: volFs,
      tearDownCSIVolumes: async (uid) => {
        csi.push(uid);
        mounted.delete(join(pods, uid, "volumes", "kubernetes.io~csi", "pv", "mount"));
        rmSync(join(pods, uid, "volumes", "kubernetes.io~csi", "pv"), { recursive: true });
      },
      unmountUnusedLocalDevices: () => void devices++,
      cleanSubPaths: (p) => void subPaths.push(p),
      metrics: { reconstructed: (f) => void metrics.reconstructed.push(f), forceCleaned: (f) => void metrics.forceCleaned.push(f) },
    });
    const r = await createOrphanedPodDirs({ rootDir, fs: dirFs, tearDownVolumes }).cleanup((u) => u === "kept", nothingRunning);
    expect(r).toEqual({ orphans: 1, errors: 0, removed: ["gone"] });
    expect(csi).toEqual(["gone"]);
    expect(subPaths).toEqual([join(pods, "gone")]);
    expect(devices).toBe(1);
    expect(unmounted.sort()).toEqual(
      ["empty-dir/mem", "local-volume/pv1", "projected/kube-api-access"].map((v) => join(pods, "gone", "volumes", `kubernetes.io~${v}`)),
    );
    expect(existsSync(join(pods, "gone"))).toBe(false);
    expect([...mounted]).toEqual([join(pods, "kept", "volumes", "kubernetes.io~empty-dir", "mem")]);
    expect(metrics).toEqual({ reconstructed: [false, false, false, false], forceCleaned: [] });
    expect(lines.some((l) => l.includes("UnmountVolume.TearDown succeeded for volume") && l.includes("volumeSpecName=mem"))).toBe(true);
  });

  test("an orphan with raw block volumes only: the local one's link goes before its global map files are swept, the CSI one goes to its driver", async () => {
    const local = join(dir("blk", "volumeDevices/kubernetes.io~local-volume"), "pv-b");
    const csiLink = join(dir("blk", "volumeDevices/kubernetes.io~csi"), "pv-c");
    symlinkSync("/dev/null", local);
    symlinkSync("/dev/null", csiLink);
    const seen: string[] = [];
    const tearDownVolumes = createOrphanVolumeTearDown({
      fs: volFs,
      cleanSubPaths: () => {},
      tearDownCSIVolumes: async (uid) => {
        seen.push(`csi ${uid}`);
        rmSync(csiLink);
      },
      unmountUnusedLocalDevices: () => void seen.push(`local devices, link left: ${existsSync(local)}`),
    });
    const r = await createOrphanedPodDirs({ rootDir, fs: dirFs, tearDownVolumes }).cleanup(() => false, nothingRunning);
    expect(r.removed).toEqual(["blk"]);
    expect(seen).toEqual(["csi blk", "local devices, link left: false"]);
  });

  test("a CSI driver not registered yet keeps the directory and its other volumes go; the next pass retries", async () => {
    mount("csi", "volumes/kubernetes.io~empty-dir/mem");
    mount("csi", "volumes/kubernetes.io~csi/pv/mount");
    writeFileSync(join(pods, "csi", "volumes", "kubernetes.io~csi", "pv", "vol_data.json"), "{}");
    let registered = false;
    const tearDownVolumes = createOrphanVolumeTearDown({
      fs: volFs,
      cleanSubPaths: () => {},
      tearDownCSIVolumes: async (uid) => {
        if (!registered) throw new Error("driver name csi.example not found in the list of registered CSI drivers");
        mounted.delete(join(pods, uid, "volumes", "kubernetes.io~csi", "pv", "mount"));
        rmSync(join(pods, uid, "volumes", "kubernetes.io~csi", "pv"), { recursive: true });
      },
    });
    const dirs = createOrphanedPodDirs({ rootDir, fs: dirFs, tearDownVolumes });
    expect((await dirs.cleanup(() => false, nothingRunning)).removed).toEqual([]);
    expect(unmounted).toEqual([join(pods, "csi", "volumes", "kubernetes.io~empty-dir", "mem")]);
    expect(lines.some((l) => l.includes("orphaned pod found, but volumes are still mounted on disk") && l.includes("csi.example"))).toBe(true);
    registered = true;
    expect((await dirs.cleanup(() => false, nothingRunning)).removed).toEqual(["csi"]);
  });

  test("a mounted volume that cannot be reconstructed stays mounted and keeps the directory, reported once", async () => {
    mount("odd", "volumes/kubernetes.io~csi/bare/mount");
    mount("odd", "volumes/example.com~nfs/share");
    const forced: boolean[] = [];
    const tearDownVolumes = createOrphanVolumeTearDown({
      fs: volFs,
      cleanSubPaths: () => {},
      tearDownCSIVolumes: async () => {
        throw new Error("not expected: no vol_data.json");
      },
      metrics: { reconstructed: () => {}, forceCleaned: (f) => void forced.push(f) },
    });
    const dirs = createOrphanedPodDirs({ rootDir, fs: dirFs, tearDownVolumes });
    await dirs.cleanup(() => false, nothingRunning);
    await dirs.cleanup(() => false, nothingRunning);
    expect(unmounted).toEqual([]);
    expect(mounted.size).toBe(2);
    expect(forced).toEqual([true, true]);
    expect(lines.filter((l) => l.includes("Could not construct volume information"))).toHaveLength(2);
    expect(lines.filter((l) => l.includes("orphaned pod found, but volumes are still mounted on disk"))).toHaveLength(1);
  });
});
