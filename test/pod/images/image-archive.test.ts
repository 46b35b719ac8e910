import { describe, expect, test } from "bun:test";
import {
  childGcLabels,
  dockerArchiveManifest,
  isImageRef,
  layerMediaType,
  MEDIA,
  normalizeImageRef,
  ociImageName,
  planImport,
  sha256Bytes,
} from "../../../src/pod/images/image-archive.ts";
import { indexTar } from "../../../src/pod/images/tar.ts";
import { makeTar, readerOf } from "./tar-fixture.ts";

const enc = new TextEncoder();
const sha = (s: string | Uint8Array) => `sha256:${new Bun.CryptoHasher("sha256").update(s).digest("hex")}`;
const hashOf = (bytes: Uint8Array) => async (offset: number, size: number) => sha(bytes.subarray(offset, offset + size));

async function plan(tar: Uint8Array, baseName = "app") {
  return planImport(await indexTar(readerOf(tar), tar.length), readerOf(tar), { baseName, hash: hashOf(tar) });
}

describe("normalizeImageRef", () => {
  test.each([
    ["busybox", "docker.io/library/busybox:latest"],
    ["busybox:1.36", "docker.io/library/busybox:1.36"],
    ["me/app:v1", "docker.io/me/app:v1"],
    ["registry.local:5000/app", "registry.local:5000/app:latest"],
    ["localhost/app:v2", "localhost/app:v2"],
    [`quay.io/x/y:t@sha256:${"a".repeat(64)}`, `quay.io/x/y@sha256:${"a".repeat(64)}`],
  ])("%s → %s", (ref, want) => expect(normalizeImageRef(ref)).toBe(want));
});

describe("isImageRef", () => {
  test.each([
    ["busybox", true],
    ["registry.local:5000/a/b:v1.2", true],
    ["Upper/case", false],
    ["has space", false],
    ["", false],
    ["a:b:c", false],
  ])("%s → %p", (ref, want) => expect(isImageRef(ref)).toBe(want));
});

describe("ociImageName", () => {
  test.each([
    [{ "io.containerd.image.name": "docker.io/library/pause:3.9", "org.opencontainers.image.ref.name": "3.9" }, "docker.io/library/pause:3.9"],
    [{ "org.opencontainers.image.ref.name": "registry.local/app:v1" }, "registry.local/app:v1"],
    [{ "org.opencontainers.image.ref.name": "v1" }, "docker.io/library/app:v1"],
    [{ "org.opencontainers.image.ref.name": "Not A Tag" }, undefined],
    [{}, undefined],
    [undefined, undefined],
  ] as const)("%j → %p", (annotations, want) => expect(ociImageName(annotations as Record<string, string> | undefined, "app")).toBe(want));
});

describe("childGcLabels", () => {
  test("config and layers of a manifest; manifests of an index", () => {
    expect(childGcLabels({ config: { mediaType: "c", digest: "sha256:c", size: 1 }, layers: [{ mediaType: "l", digest: "sha256:l0", size: 1 }] })).toEqual({
      "containerd.io/gc.ref.content.config": "sha256:c",
      "containerd.io/gc.ref.content.l.0": "sha256:l0",
    });
    expect(childGcLabels({ manifests: [{ mediaType: "m", digest: "sha256:m0", size: 1 }] })).toEqual({ "containerd.io/gc.ref.content.m.0": "sha256:m0" });
  });
});

describe("layerMediaType", () => {
  test.each([
    [[0x1f, 0x8b, 8, 0], `${MEDIA.ociLayer}+gzip`],
    [[0x28, 0xb5, 0x2f, 0xfd], `${MEDIA.ociLayer}+zstd`],
    [[0x2e, 0x2f, 0, 0], MEDIA.ociLayer],
  ])("%j → %s", (head, want) => expect(layerMediaType(new Uint8Array(head))).toBe(want));
});

/** An OCI layout with one image: a layer, a config, a manifest, the index naming it. */
function ociLayout(annotations: Record<string, string>, opts: { dropLayer?: boolean } = {}) {
  const layer = "layer-bytes";
  const config = '{"architecture":"amd64","os":"linux","rootfs":{"type":"layers","diff_ids":[]}}';
  const manifest = JSON.stringify({
    schemaVersion: 2,
    mediaType: MEDIA.ociManifest,
    config: { mediaType: MEDIA.ociConfig, digest: sha(config), size: config.length },
    layers: [{ mediaType: `${MEDIA.ociLayer}+gzip`, digest: sha(layer), size: layer.length }],
  });
  const index = JSON.stringify({
    schemaVersion: 2,
    manifests: [{ mediaType: MEDIA.ociManifest, digest: sha(manifest), size: manifest.length, annotations }],
  });
  const blob = (s: string) => ({ name: `./blobs/sha256/${sha(s).slice(7)}`, data: s });
  const tar = makeTar([
    { name: "./oci-layout", data: '{"imageLayoutVersion":"1.0.0"}' },
    { name: "./index.json", data: index },
    ...(opts.dropLayer ? [] : [blob(layer)]),
    blob(config),
    blob(manifest),
  ]);
  return { tar, layer, config, manifest };
}

describe("planImport: OCI image layout", () => {
  test("blobs children first with the GC labels of their parent; the image named and targeting the manifest", async () => {
    const { tar, layer, config, manifest } = ociLayout({ "org.opencontainers.image.ref.name": "v1" });
    const p = await plan(tar, "edge-app");
    expect(p.format).toBe("oci-layout");
    expect(p.blobs.map((b) => b.desc.digest)).toEqual([sha(config), sha(layer), sha(manifest)]);
    expect(p.blobs[2]!.labels).toEqual({ "containerd.io/gc.ref.content.config": sha(config), "containerd.io/gc.ref.content.l.0": sha(layer) });
    expect(p.images).toEqual([
      { name: "docker.io/library/edge-app:v1", target: { mediaType: MEDIA.ociManifest, digest: sha(manifest), size: manifest.length } },
    ]);
    const src = p.blobs[1]!.source;
    expect(src.kind === "tar" && new TextDecoder().decode(tar.subarray(src.offset, src.offset + layer.length))).toBe(layer);
  });

  test("an image without a name is skipped with a warning", async () => {
    const p = await plan(ociLayout({}).tar);
    expect(p.images).toEqual([]);
    expect(p.warnings[0]).toContain("has no name");
  });

  test("a layer the archive lacks fails the import, naming the blob", async () => {
    const { tar, layer } = ociLayout({ "io.containerd.image.name": "x/y:1" }, { dropLayer: true });
    await expect(plan(tar)).rejects.toThrow(`blob ${sha(layer)}`);
  });
});

describe("planImport: docker-archive", () => {
  test("an OCI manifest built from manifest.json, its config and layers hashed; every RepoTag an image", async () => {
    const layer = new Uint8Array([0x1f, 0x8b, 8, 0, 1, 2, 3]);
    const config = '{"architecture":"amd64","os":"linux"}';
    const manifestJson = JSON.stringify([{ Config: "cfg.json", RepoTags: ["edge/app:v2", "edge/app:latest"], Layers: ["abc/layer.tar", "def/layer.tar"] }]);
    const tar = makeTar([
      { name: "cfg.json", data: config },
      { name: "abc/layer.tar", data: layer },
      { name: "def/layer.tar", type: "2", linkName: "../abc/layer.tar" },
      { name: "manifest.json", data: manifestJson },
    ]);
    const p = await plan(tar);
    expect(p.format).toBe("docker-archive");
    const layerDesc = { mediaType: `${MEDIA.ociLayer}+gzip`, digest: sha(layer), size: layer.length };
    const configDesc = { mediaType: MEDIA.ociConfig, digest: sha(config), size: config.length };
    const manifest = dockerArchiveManifest(configDesc, [layerDesc, layerDesc]);
    expect(JSON.parse(new TextDecoder().decode(manifest))).toEqual({
      schemaVersion: 2,
      mediaType: MEDIA.ociManifest,
      config: configDesc,
      layers: [layerDesc, layerDesc],
    });
    // The shared layer once; then the config; then the manifest built in memory.
    expect(p.blobs.map((b) => b.desc.digest)).toEqual([sha(layer), sha(config), await sha256Bytes(manifest)]);
    expect(p.blobs[2]!.source).toEqual({ kind: "bytes", data: manifest });
    const target = { mediaType: MEDIA.ociManifest, digest: await sha256Bytes(manifest), size: manifest.length };
    expect(p.images).toEqual([
      { name: "docker.io/edge/app:v2", target },
      { name: "docker.io/edge/app:latest", target },
    ]);
  });

  test("a layer manifest.json names but the archive lacks fails the import", async () => {
    const tar = makeTar([
      { name: "cfg.json", data: "{}" },
      { name: "manifest.json", data: JSON.stringify([{ Config: "cfg.json", RepoTags: ["a:1"], Layers: ["gone/layer.tar"] }]) },
    ]);
    await expect(plan(tar)).rejects.toThrow('"gone/layer.tar", which is not in the archive');
  });

  test("neither format: refused", async () => {
    await expect(plan(makeTar([{ name: "readme", data: "hi" }]))).rejects.toThrow("neither an OCI image layout");
  });
});

test("sha256Bytes", async () => {
  expect(await sha256Bytes(enc.encode("abc"))).toBe("sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
});
