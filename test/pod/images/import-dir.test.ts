// The image import directory against a fake containerd: what is imported when, what is pinned, and
// that failures are retried, not fatal. The tarballs are real files in a temporary directory.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, renameSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { realClock } from "../../../src/clock.ts";
import type { ContainerdClient, ContainerdImage, Descriptor } from "../../../src/cri/containerd.ts";
import { MEDIA } from "../../../src/pod/images/image-archive.ts";
import { createImageImportDir, type ImageImportDir, importFileKind, parseImageList } from "../../../src/pod/images/import-dir.ts";
import { until } from "../../support/wait.ts";
import { makeTar } from "./tar-fixture.ts";

describe("importFileKind", () => {
  test.each([
    ["app.tar", "tarball"],
    ["app.tar.gz", "tarball"],
    ["app.tgz", "tarball"],
    ["images.txt", "list"],
    [".app.tar", undefined],
    ["app.tar.part", undefined],
    ["README", undefined],
  ] as const)("%s → %p", (name, kind) => expect(importFileKind(name)).toBe(kind));
});

describe("parseImageList", () => {
  test("one reference a line, normalized; comments and blank lines skipped; bad lines reported with their number", () => {
    expect(parseImageList("busybox\n\n# a comment\nregistry.local/app:v1  # pinned tag\nNot An Image\nbusybox:latest\n")).toEqual({
      refs: ["docker.io/library/busybox:latest", "registry.local/app:v1"],
      bad: [{ line: 5, text: "Not An Image" }],
    });
  });
});

const sha = (s: string) => `sha256:${new Bun.CryptoHasher("sha256").update(s).digest("hex")}`;

/** A docker-archive tarball of one image named `tag`, its layer holding `content`. */
function dockerArchive(tag: string, content: string): Uint8Array {
  return makeTar([
    { name: "cfg.json", data: `{"os":"linux","id":"${content}"}` },
    { name: "l/layer.tar", data: content },
    { name: "manifest.json", data: JSON.stringify([{ Config: "cfg.json", RepoTags: [tag], Layers: ["l/layer.tar"] }]) },
  ]);
}

/** A containerd that keeps blobs and images in maps. */
function fakeContainerd(opts: { failWrites?: () => boolean } = {}) {
  const blobs = new Map<string, { size: number; labels: Record<string, string> }>();
  const images = new Map<string, ContainerdImage>();
  const leases = new Set<string>();
  const client: ContainerdClient = {
    async contentInfo(digest) {
      return blobs.get(digest) ?? null;
    },
    async writeBlob(_ref, desc: Descriptor, read, lease, labels = {}) {
      if (opts.failWrites?.()) throw new Error("content store unavailable");
      if (!leases.has(lease)) throw new Error("write without a live lease");
      const data = await read(0, desc.size);
      if (sha(new TextDecoder().decode(data)) !== desc.digest && desc.mediaType !== MEDIA.ociLayer) throw new Error(`digest mismatch ${desc.digest}`);
      blobs.set(desc.digest, { size: desc.size, labels });
    },
    async getImage(name) {
      return images.get(name) ?? null;
    },
    async putImage(image, lease) {
      if (!leases.has(lease)) throw new Error("image put without a live lease");
      images.set(image.name, image);
    },
    async createLease(id) {
      leases.add(id);
      return id;
    },
    async deleteLease(id) {
      leases.delete(id);
    },
    close() {},
  };
  return { client, blobs, images, leases };
}

let dir: string;
let importDir: ImageImportDir | undefined;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "bunlet-import-dir-"));
});
afterEach(() => {
  importDir?.stop();
  importDir = undefined;
  rmSync(dir, { recursive: true, force: true });
});

function start(ctd: ReturnType<typeof fakeContainerd>, extra: { pull?: (ref: string) => Promise<string>; retryMs?: number } = {}) {
  const seen: string[][] = [];
  const pulls: string[] = [];
  importDir = createImageImportDir({
    path: dir,
    containerd: ctd.client,
    cri: { imageStatus: async (ref) => (ctd.images.has(typeof ref === "string" ? ref : ref.image) ? ({ id: "x" } as never) : null) },
    pull:
      extra.pull ??
      (async (ref) => {
        pulls.push(ref);
        return ref;
      }),
    clock: realClock,
    onImages: (names) => void seen.push(names),
    debounceMs: 5,
    retryMs: extra.retryMs ?? 60_000,
  });
  return { importDir, seen, pulls };
}

describe("createImageImportDir", () => {
  test("tarballs present at start are imported, pinned and announced; the lease is gone afterwards", async () => {
    writeFileSync(join(dir, "app.tar"), dockerArchive("edge/app:v1", "one"));
    writeFileSync(join(dir, "other.tgz"), gzipSync(dockerArchive("edge/other:v1", "two")));
    writeFileSync(join(dir, "ignored.bin"), "x");
    const ctd = fakeContainerd();
    const { importDir, seen } = start(ctd);
    await importDir.start();
    expect([...ctd.images.keys()].sort()).toEqual(["docker.io/edge/app:v1", "docker.io/edge/other:v1"]);
    expect(ctd.images.get("docker.io/edge/app:v1")!.labels).toEqual({ "io.cri-containerd.pinned": "pinned" });
    expect(importDir.pinnedImages().sort()).toEqual(["docker.io/edge/app:v1", "docker.io/edge/other:v1"]);
    expect(seen.flat().sort()).toEqual(["docker.io/edge/app:v1", "docker.io/edge/other:v1"]);
    expect(ctd.leases.size).toBe(0);
  });

  test("a tarball dropped later (renamed in, as a copy should be) is imported through the watch", async () => {
    const ctd = fakeContainerd();
    const { importDir, seen } = start(ctd);
    await importDir.start();
    writeFileSync(join(dir, ".app.tar.tmp"), dockerArchive("edge/late:v1", "late"));
    renameSync(join(dir, ".app.tar.tmp"), join(dir, "late.tar"));
    await until("the dropped tarball imported and announced", () => seen.length > 0, 10_000, { intervalMs: 10 });
    expect(ctd.images.has("docker.io/edge/late:v1")).toBe(true);
    expect(seen).toEqual([["docker.io/edge/late:v1"]]);
  });

  test("an unchanged tarball is not imported again; its image removed behind bunlet's back is", async () => {
    writeFileSync(join(dir, "app.tar"), dockerArchive("edge/app:v1", "one"));
    const ctd = fakeContainerd();
    const { importDir, seen } = start(ctd);
    await importDir.start();
    await importDir.scan();
    expect(seen.length).toBe(1);
    ctd.images.clear();
    await importDir.scan();
    expect(ctd.images.has("docker.io/edge/app:v1")).toBe(true);
    expect(seen.length).toBe(2);
  });

  test("a failed import is logged, not fatal, and retried; a removed tarball is no longer pinned", async () => {
    writeFileSync(join(dir, "bad.tar"), "not a tar at all".repeat(64));
    writeFileSync(join(dir, "app.tar"), dockerArchive("edge/app:v1", "one"));
    let fail = true;
    const ctd = fakeContainerd({ failWrites: () => fail });
    const { importDir } = start(ctd, { retryMs: 20 });
    await importDir.start();
    expect(ctd.images.size).toBe(0);
    fail = false;
    await until("the import retried", () => ctd.images.has("docker.io/edge/app:v1"), 10_000, { intervalMs: 10 });
    rmSync(join(dir, "app.tar"));
    await importDir.scan();
    expect(importDir.pinnedImages()).toEqual([]);
  });

  test(".txt lists: missing images pulled, failures retried, listed images pinned", async () => {
    writeFileSync(join(dir, "images.txt"), "registry.local/a:1\nregistry.local/b:2\n");
    const ctd = fakeContainerd();
    ctd.images.set("registry.local/b:2", { name: "registry.local/b:2", labels: {}, target: { mediaType: "m", digest: "d", size: 1 } });
    let reachable = false;
    const pulls: string[] = [];
    const { importDir } = start(ctd, {
      retryMs: 20,
      pull: async (ref) => {
        pulls.push(ref);
        if (!reachable) throw new Error("dial tcp: connect: network is unreachable");
        return ref;
      },
    });
    await importDir.start();
    expect(importDir.pinnedImages().sort()).toEqual(["registry.local/a:1", "registry.local/b:2"]);
    await until("a pull tried", () => pulls.length >= 1, 10_000, { intervalMs: 10 });
    reachable = true;
    await until("a pull tried again and succeeded", () => pulls.length >= 2, 10_000, { intervalMs: 10 });
    expect(new Set(pulls)).toEqual(new Set(["registry.local/a:1"]));
  });
});
