// subPath mounts from a held fd (upstream subpath_linux.go doSafeOpen, doSafeMakeDir, doBindSubPath):
// a symlink swapped into a sub path component while the kubelet checks and mounts it — raced 1,000
// times by a separate process — never yields a mount whose content is outside the volume; ordinary
// sub paths (directories, files, in-volume symlinks) are bind-mounted, kept across calls and cleaned
// with the pod. Root only (mounts); every mount is under a temp directory of this test.
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { AT_FDCWD, MNT_DETACH, MS_BIND, mount, statx, umount2 } from "../../../ffi/fs.ts";
import { cleanSubPaths, mountPointsUnder, prepareSafeSubPath, subPathBindTarget } from "../../../src/pod/volumes/index.ts";
import { safeMakeDir, safeOpen } from "../../../src/pod/volumes/safe-open.ts";
import { close } from "../../../ffi/libc.ts";

const root = process.getuid?.() === 0;
let base = "";
let racer: ReturnType<typeof spawnRacer> | undefined;

function spawnRacer(vol: string, linkTarget: string) {
  return Bun.spawn([process.execPath, resolve(import.meta.dir, "../../support/subpath-racer.ts"), vol, "sub", linkTarget], {
    stdout: "pipe",
    stderr: "inherit",
  });
}

beforeAll(() => {
  if (root) base = realpathSync(mkdtempSync(join(tmpdir(), `bunlet-subpath-${process.pid}-`)));
});
afterEach(async () => {
  if (racer) {
    racer.kill(9);
    await racer.exited;
    racer = undefined;
  }
});
afterAll(() => {
  if (!base) return;
  for (const mp of mountPointsUnder(base)) umount2(mp, MNT_DETACH);
  rmSync(base, { recursive: true, force: true });
});

let n = 0;
function fresh(): { vol: string; podDir: string; rt: string } {
  const d = join(base, `case-${n++}`);
  const vol = join(d, "vol");
  const podDir = join(d, "pod");
  const rt = join(d, "rt");
  for (const x of [vol, podDir, rt]) mkdirSync(x, { recursive: true });
  return { vol, podDir, rt };
}

function runtimeMount(target: string, at: string): boolean {
  try {
    mount(target, at, null, MS_BIND);
    return true;
  } catch (e) {
    if ((e as { code?: string }).code === "ENOENT") return false;
    throw e;
  }
}

function listing(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch (e) {
    if ((e as { code?: string }).code === "ENOENT") return [];
    throw e;
  }
}

const req = (vol: string, podDir: string, subPath: string, volumeMountIndex = 0) => ({
  volumePath: vol,
  subPath,
  podDir,
  volumeName: "v",
  containerName: "c",
  volumeMountIndex,
});

describe.skipIf(!root)("subPath bind mounts", () => {
  test("a directory sub path is created, bind-mounted at volume-subpaths/<volume>/<container>/<index>, kept, and cleaned", () => {
    const { vol, podDir } = fresh();
    const target = prepareSafeSubPath(req(vol, podDir, "a/b", 3));
    expect(target).toBe(subPathBindTarget(podDir, "v", "c", 3));
    expect(target).toBe(join(podDir, "volume-subpaths", "v", "c", "3"));
    writeFileSync(join(target, "w"), "through the mount");
    expect(readFileSync(join(vol, "a/b/w"), "utf8")).toBe("through the mount");
    expect(mountPointsUnder(target)).toEqual([target]);
    // A second call (container restart) keeps the one mount.
    expect(prepareSafeSubPath(req(vol, podDir, "a/b", 3))).toBe(target);
    expect(mountPointsUnder(podDir)).toEqual([target]);
    cleanSubPaths(podDir);
    expect(mountPointsUnder(podDir)).toEqual([]);
    expect(existsSync(join(podDir, "volume-subpaths"))).toBe(false);
    expect(readFileSync(join(vol, "a/b/w"), "utf8")).toBe("through the mount");
  });

  test("a pod directory reached through a symlink: a second call finds its mount, cleaning unmounts it", () => {
    const { vol, podDir } = fresh();
    const linked = `${podDir}-link`;
    symlinkSync(podDir, linked);
    const target = prepareSafeSubPath(req(vol, linked, "d"));
    expect(prepareSafeSubPath(req(vol, linked, "d"))).toBe(target);
    expect(mountPointsUnder(podDir)).toEqual([join(podDir, "volume-subpaths", "v", "c", "0")]);
    cleanSubPaths(linked);
    expect(mountPointsUnder(podDir)).toEqual([]);
  });

  test("a file sub path is bind-mounted onto a file; an in-volume symlink is followed once, at the check", () => {
    const { vol, podDir } = fresh();
    writeFileSync(join(vol, "conf"), "x=1");
    mkdirSync(join(vol, "real"));
    symlinkSync("real", join(vol, "inside"));
    const f = prepareSafeSubPath(req(vol, podDir, "conf", 0));
    expect(statSync(f).isFile()).toBe(true);
    expect(readFileSync(f, "utf8")).toBe("x=1");
    const d = prepareSafeSubPath(req(vol, podDir, "inside", 1));
    expect(statx(AT_FDCWD, d, 0).ino).toBe(statx(AT_FDCWD, join(vol, "real"), 0).ino);
    cleanSubPaths(podDir);
    expect(mountPointsUnder(podDir)).toEqual([]);
  });

  test("a target mounted with another inode (the sub path was replaced) is remounted", () => {
    const { vol, podDir } = fresh();
    const target = prepareSafeSubPath(req(vol, podDir, "d"));
    rmSync(join(vol, "d"), { recursive: true });
    mkdirSync(join(vol, "d"));
    writeFileSync(join(vol, "d", "new"), "");
    expect(prepareSafeSubPath(req(vol, podDir, "d"))).toBe(target);
    expect(readdirSync(target)).toEqual(["new"]);
    expect(mountPointsUnder(podDir)).toEqual([target]);
    cleanSubPaths(podDir);
  });

  test("symlinks out of the volume are refused with upstream's messages; nothing is mounted or created outside", () => {
    const { vol, podDir } = fresh();
    const outside = join(vol, "..", "outside");
    mkdirSync(outside);
    symlinkSync(outside, join(vol, "escape"));
    expect(() => prepareSafeSubPath(req(vol, podDir, "escape"))).toThrow('failed to prepare subPath for volumeMount "v" of container "c"');
    expect(() => prepareSafeSubPath(req(vol, podDir, "escape/newdir"))).toThrow('failed to create subPath directory for volumeMount "v" of container "c"');
    expect(existsSync(join(outside, "newdir"))).toBe(false);
    expect(mountPointsUnder(podDir)).toEqual([]);
  });

  test("safeOpen refuses a symlink in any component; safeMakeDir creates through fds with the volume's mode", () => {
    const { vol } = fresh();
    mkdirSync(join(vol, "a"));
    symlinkSync("/etc", join(vol, "a", "l"));
    expect(() => safeOpen(vol, "a/l")).toThrow(/unexpected symlink found/);
    expect(() => safeOpen(vol, "a/l/passwd")).toThrow(/unexpected symlink found/);
    expect(() => safeOpen(vol, "a/../a")).toThrow(/must not contain '\.\.'/);
    expect(() => safeMakeDir(vol, "a/l/x", 0o777)).toThrow(/unexpected symlink or non-directory/);
    expect(existsSync("/etc/x")).toBe(false);
    safeMakeDir(vol, "a/m/n", 0o2775);
    expect(statSync(join(vol, "a/m/n")).mode & 0o7777).toBe(0o2775);
    close(safeOpen(vol, "a/m/n"));
  });

  for (const [name, subPath, linkTo] of [
    ["the sub path itself flips to a symlink to /etc", "sub", "/etc"],
    ["a middle component flips to a symlink to a host directory", "sub/inner", "host"],
  ] as const) {
    test(`race, 1,000 rounds: ${name} — every mount shows the volume's directory or a refusal`, async () => {
      const { vol, podDir, rt } = fresh();
      const host = join(vol, "..", "host");
      mkdirSync(join(host, "inner"), { recursive: true });
      writeFileSync(join(host, "inner", "passwd"), "host secret");
      writeFileSync(join(host, "passwd"), "host secret");
      mkdirSync(join(vol, "sub", "inner"), { recursive: true });
      writeFileSync(join(vol, "sub", "inner", "marker"), "");
      writeFileSync(join(vol, "sub", "marker"), "");
      const forbidden = new Set([statx(AT_FDCWD, "/etc", 0).ino, statx(AT_FDCWD, host, 0).ino, statx(AT_FDCWD, join(host, "inner"), 0).ino]);
      racer = spawnRacer(vol, linkTo === "/etc" ? "/etc" : host);
      await racer.stdout.getReader().read(); // "racing"
      let mounted = 0;
      let refused = 0;
      for (let i = 0; i < 1000; i++) {
        let target: string;
        try {
          target = prepareSafeSubPath(req(vol, podDir, subPath, i % 4));
        } catch {
          refused++;
          continue;
        }
        // The runtime mounts what it is handed a CRI round trip later…
        await Bun.sleep(1);
        // …with a bind mount that follows symlinks. A
        // directory the racer renamed over after the kubelet made it is a deleted one: the runtime
        // fails to mount it (ENOENT), or shows it empty and unlistable — still nothing of the host.
        if (!runtimeMount(target, rt)) {
          refused++;
          continue;
        }
        try {
          const st = statx(AT_FDCWD, rt, 0);
          expect(forbidden.has(st.ino)).toBe(false);
          expect(listing(rt).filter((x) => x !== "marker" && x !== "inner")).toEqual([]);
          mounted++;
        } finally {
          umount2(rt, 0);
        }
        if (i % 4 === 3) cleanSubPaths(podDir);
      }
      cleanSubPaths(podDir);
      expect(mounted + refused).toBe(1000);
      expect(readdirSync(vol).some((x) => x.startsWith(".junk-")) || refused > 0).toBe(true); // the racer did race
      expect(mounted).toBeGreaterThan(0);
      expect(existsSync("/etc/inner")).toBe(false);
      expect(mountPointsUnder(podDir)).toEqual([]);
    }, 120_000);
  }
});
