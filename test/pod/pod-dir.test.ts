// The pod's directories (upstream kubelet.go setupDataDirs, makePodDataDirs; pkg/volume/emptydir
// setupDir): rootDir, pods/<uid> and volumes/ are 0750; an emptyDir on disk is 0777 (no sticky bit,
// upstream's perm), and so is the directory of a volume upstream wraps in one (configMap, downwardAPI…); a UID that is not one plain path component is refused at decode and at the path.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { holdOwnerLock } from "../../src/pod/kuberuntime/owner.ts";
import { setUpEmptyDir } from "../../src/pod/kuberuntime/empty-dir.ts";
import { decodePod } from "../../src/pod/manifest.ts";
import { InvalidPodUidError, makePodDir, podDir, podUidError } from "../../src/pod/pod-dir.ts";
import { setUpPodVolume } from "../../src/pod/volumes/index.ts";

const base = mkdtempSync(join(tmpdir(), `bunlet-poddir-${process.pid}-`));
afterAll(() => rmSync(base, { recursive: true, force: true }));
const mode = (p: string) => statSync(p).mode & 0o7777;

describe("pod UIDs in host paths", () => {
  test.each([
    ["6b1f5b0e-1c2d-4e5f-8a9b-0c1d2e3f4a5b", true],
    ["d41d8cd98f00b204e9800998ecf8427e", true],
    ["uid-a.b_c", true],
    ["../../etc", false],
    ["..", false],
    [".", false],
    ["a/b", false],
    ["/abs", false],
    ["a..b", false],
    ["-lead", false],
    ["nul\u0000byte", false],
    ["new\nline", false],
    ["x".repeat(129), false],
  ])("%p ok=%p", (uid, ok) => {
    expect(podUidError(uid) === undefined).toBe(ok);
    if (ok) expect(podDir("/r", uid)).toBe(`/r/pods/${uid}`);
    else expect(() => podDir("/r", uid)).toThrow(InvalidPodUidError);
  });

  test("a pod whose metadata.uid is a path is refused at decode, from files and from the API", () => {
    for (const source of ["static", "api"] as const) {
      const r = decodePod({ metadata: { name: "a", uid: "../../../etc" }, spec: { containers: [{ name: "c", image: "i" }] } }, "f", "", source);
      expect(r.pod).toBeUndefined();
      expect(r.errors[0]!.message).toMatch(/metadata\.uid: must consist of/);
    }
  });
});

describe("directory modes", () => {
  test("rootDir, pods/, pods/<uid> and volumes/ are 0750; an emptyDir on disk is 0777", () => {
    const rootDir = join(base, "root");
    holdOwnerLock(rootDir)?.release();
    expect(mode(rootDir)).toBe(0o750);
    const pod = { metadata: { name: "p", namespace: "ns", uid: "u1" }, spec: { containers: [{ name: "c", image: "i" }] } };
    const dir = setUpEmptyDir(rootDir, pod, "cache", {}, 0);
    expect(mode(dir)).toBe(0o777);
    for (const d of [
      join(rootDir, "pods"),
      join(rootDir, "pods", "u1"),
      join(rootDir, "pods", "u1", "volumes"),
      join(rootDir, "pods", "u1", "volumes", "kubernetes.io~empty-dir"),
    ])
      expect([d, mode(d)]).toEqual([d, 0o750]);
  });

  test("configMap/downwardAPI volume directories are 0777 (a non-root container reads them), their parents 0750", () => {
    const rootDir = join(base, "root2");
    const pod = { metadata: { name: "p", namespace: "ns", uid: "u2" }, spec: { containers: [{ name: "c", image: "i" }] } };
    const dir = setUpPodVolume(rootDir, { name: "d", downwardAPI: { items: [{ path: "name", fieldRef: { fieldPath: "metadata.name" } }] } }, { pod } as never)!;
    for (const d of [join(rootDir, "pods", "u2"), join(rootDir, "pods", "u2", "volumes"), join(rootDir, "pods", "u2", "volumes", "kubernetes.io~downward-api")])
      expect([d, mode(d)]).toEqual([d, 0o750]);
    expect(mode(dir)).toBe(0o777);
    expect(mode(join(dir, "..data/name"))).toBe(0o644);
    expect(makePodDir(rootDir, "u2", "x")).toBe(join(rootDir, "pods", "u2", "x"));
  });
});
