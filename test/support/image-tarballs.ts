// Image tarballs for the image import tests, made from the offline busybox image (scripts/host/setup.sh
// images, an OCI layout tarball) with one more layer holding /imported-marker, so each image is new
// content for the runtime: an OCI layout tarball of one or more such images, or a docker-archive
// (`docker save` format: manifest.json, the config, one tar per layer).
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { gzipSync } from "node:zlib";
import { makeTar } from "../pod/images/tar-fixture.ts";

const SCRIPTS = resolve(import.meta.dir, "../../scripts/host");
const sha = (b: Uint8Array | string) => `sha256:${new Bun.CryptoHasher("sha256").update(b).digest("hex")}`;

interface Desc {
  mediaType: string;
  digest: string;
  size: number;
}

/** One image: its blobs by digest and its manifest's descriptor. */
export interface BuiltImage {
  name: string;
  blobs: Map<string, Uint8Array>;
  manifest: Desc;
  config: Desc;
  layers: Desc[];
}

function run(cmd: string, args: string[]): string {
  const r = spawnSync(cmd, args, { encoding: "utf8", timeout: 300_000 });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(" ")}: exit ${r.status}: ${r.stderr}`);
  return r.stdout;
}

/** The offline busybox image's layout, extracted into a temporary directory (removed by the caller). */
export function busyboxLayout(): string {
  const cache = run("bash", [`${SCRIPTS}/setup.sh`, "images"])
    .trim()
    .split("\n")
    .pop()!;
  const dir = mkdtempSync(join(tmpdir(), "bunlet-busybox-layout-"));
  run("tar", ["-C", dir, "-xf", join(cache, "busybox.tar")]);
  return dir;
}

/**
 * busybox plus a layer with /imported-marker holding `marker`, named `name`; `paddingBytes` of random
 * data in /padding make the layer big enough to take several content Write calls.
 */
export function markedImage(layout: string, name: string, marker: string, paddingBytes = 0): BuiltImage {
  const blob = (d: string) => new Uint8Array(readFileSync(join(layout, "blobs", ...d.split(":"))));
  const index = JSON.parse(readFileSync(join(layout, "index.json"), "utf8")) as { manifests: Desc[] };
  const base = JSON.parse(new TextDecoder().decode(blob(index.manifests[0]!.digest))) as { config: Desc; layers: Desc[] };
  const blobs = new Map<string, Uint8Array>();
  const add = (data: Uint8Array, mediaType: string): Desc => {
    const d = { mediaType, digest: sha(data), size: data.length };
    blobs.set(d.digest, data);
    return d;
  };
  for (const l of base.layers) blobs.set(l.digest, blob(l.digest));
  const padding = paddingBytes > 0 ? [{ name: "padding", data: new Uint8Array(randomBytes(paddingBytes)) }] : [];
  const layer = add(makeTar([{ name: "imported-marker", data: `${marker}\n` }, ...padding]), "application/vnd.oci.image.layer.v1.tar");
  const config = JSON.parse(new TextDecoder().decode(blob(base.config.digest)));
  config.rootfs.diff_ids.push(layer.digest);
  const configDesc = add(new TextEncoder().encode(JSON.stringify(config)), base.config.mediaType);
  const layers = [...base.layers, layer];
  const manifest = { schemaVersion: 2, mediaType: "application/vnd.oci.image.manifest.v1+json", config: configDesc, layers };
  const manifestDesc = add(new TextEncoder().encode(JSON.stringify(manifest)), manifest.mediaType);
  return { name, blobs, manifest: manifestDesc, config: configDesc, layers };
}

/** An OCI layout tarball at `out` holding `images` (named by io.containerd.image.name). */
export function writeOciTarball(out: string, images: readonly BuiltImage[]): void {
  const dir = mkdtempSync(join(tmpdir(), "bunlet-oci-out-"));
  try {
    mkdirSync(join(dir, "blobs", "sha256"), { recursive: true });
    for (const img of images) for (const [d, data] of img.blobs) writeFileSync(join(dir, "blobs", ...d.split(":")), data);
    writeFileSync(join(dir, "oci-layout"), '{"imageLayoutVersion":"1.0.0"}');
    const manifests = images.map((i) => ({ ...i.manifest, annotations: { "io.containerd.image.name": i.name } }));
    writeFileSync(join(dir, "index.json"), JSON.stringify({ schemaVersion: 2, manifests }));
    run("tar", ["-C", dir, "-cf", out, "."]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A gzipped docker-archive at `out` (docker save | gzip) of `img`. */
export function writeDockerArchiveTgz(out: string, img: BuiltImage): void {
  const hex = (d: string) => d.split(":")[1]!;
  const entries = [
    { name: `${hex(img.config.digest)}.json`, data: img.blobs.get(img.config.digest)! },
    ...img.layers.map((l) => ({ name: `${hex(l.digest)}/layer.tar`, data: img.blobs.get(l.digest)! })),
  ];
  const manifest = [{ Config: `${hex(img.config.digest)}.json`, RepoTags: [img.name], Layers: img.layers.map((l) => `${hex(l.digest)}/layer.tar`) }];
  writeFileSync(out, gzipSync(makeTar([...entries, { name: "manifest.json", data: JSON.stringify(manifest) }])));
}
