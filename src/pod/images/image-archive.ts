// What an image tarball holds and how it becomes containerd content and image records (containerd's
// archive importer, images/archive/importer.go, which `ctr images import` and k3s use): an OCI image
// layout (index.json + blobs/<alg>/<hex>, as umoci, skopeo, buildkit and docker ≥ 25 write it) or a
// docker-archive (`docker save`: manifest.json + a config file + layer tars), for which an OCI
// manifest is built from manifest.json. The plan lists every blob children first, each with the
// garbage-collection labels containerd needs to keep a parent's children (images.SetChildrenLabels),
// and the image names with their target descriptors. Pure but for reads through the injected reader.
import type { Descriptor } from "../../cri/containerd.ts";
import { repositoryOf } from "../../credentialprovider/index.ts";
import { type ReadAt, resolveTarFile, type TarEntry } from "./tar.ts";

export const MEDIA = {
  ociIndex: "application/vnd.oci.image.index.v1+json",
  ociManifest: "application/vnd.oci.image.manifest.v1+json",
  ociConfig: "application/vnd.oci.image.config.v1+json",
  ociLayer: "application/vnd.oci.image.layer.v1.tar",
  dockerManifestList: "application/vnd.docker.distribution.manifest.list.v2+json",
  dockerManifest: "application/vnd.docker.distribution.manifest.v2+json",
} as const;

/** containerd's image name annotation (images.AnnotationImageName) and the OCI one. */
export const ANNOTATION_IMAGE_NAME = "io.containerd.image.name";
export const ANNOTATION_REF_NAME = "org.opencontainers.image.ref.name";

export type BlobSource = { kind: "tar"; offset: number } | { kind: "bytes"; data: Uint8Array };

export interface PlannedBlob {
  desc: Descriptor;
  source: BlobSource;
  /** containerd.io/gc.ref.content.* labels naming the blob's children. */
  labels: Record<string, string>;
}

export interface ImportPlan {
  format: "oci-layout" | "docker-archive";
  /** Children before parents, each digest once. */
  blobs: PlannedBlob[];
  images: { name: string; target: Descriptor }[];
  /** Images found without a usable name (skipped), as one line each. */
  warnings: string[];
}

/**
 * Pure: the reference as the CRI plugin stores and looks it up (docker's ParseDockerRef):
 * busybox → docker.io/library/busybox:latest; a digest wins over a tag.
 */
export function normalizeImageRef(ref: string): string {
  const at = ref.indexOf("@");
  const digest = at >= 0 ? ref.slice(at + 1) : undefined;
  const name = at >= 0 ? ref.slice(0, at) : ref;
  const slash = name.lastIndexOf("/");
  const colon = name.lastIndexOf(":");
  const tag = colon > slash ? name.slice(colon + 1) : undefined;
  const repo = repositoryOf(name);
  if (digest) return `${repo}@${digest}`;
  return `${repo}:${tag || "latest"}`;
}

/** Pure: a reference bunlet accepts from an archive or a list (docker's reference grammar, loosely). */
export function isImageRef(ref: string): boolean {
  return /^[a-z0-9]+([._-][a-z0-9]+)*(:[0-9]+)?(\/[a-z0-9]+([._-]+[a-z0-9]+)*)*(:[\w][\w.-]{0,127})?(@sha256:[a-f0-9]{64})?$/.test(ref);
}

/**
 * Pure: the name of an image of an OCI layout — containerd's name annotation; else the OCI ref
 * name when it is a whole reference; a bare tag ("v1") is put on `baseName` (the tarball's file
 * name without its extension), as `ctr images import --base-name` does. Undefined: no usable name.
 */
export function ociImageName(annotations: Record<string, string> | undefined, baseName: string): string | undefined {
  const full = annotations?.[ANNOTATION_IMAGE_NAME];
  if (full && isImageRef(full)) return normalizeImageRef(full);
  const ref = annotations?.[ANNOTATION_REF_NAME];
  if (!ref) return undefined;
  const candidate = /[/:@]/.test(ref) ? ref : `${baseName}:${ref}`;
  return isImageRef(candidate) ? normalizeImageRef(candidate) : undefined;
}

interface ManifestJson {
  mediaType?: string;
  config?: Descriptor;
  layers?: Descriptor[];
  manifests?: (Descriptor & { annotations?: Record<string, string> })[];
}

const isIndex = (mediaType: string) => mediaType === MEDIA.ociIndex || mediaType === MEDIA.dockerManifestList;
const isManifest = (mediaType: string) => mediaType === MEDIA.ociManifest || mediaType === MEDIA.dockerManifest;

/** Pure: containerd's GC labels of a manifest's or index's children (images.ChildGCLabels). */
export function childGcLabels(json: ManifestJson): Record<string, string> {
  const labels: Record<string, string> = {};
  if (json.config) labels["containerd.io/gc.ref.content.config"] = json.config.digest;
  json.layers?.forEach((l, i) => void (labels[`containerd.io/gc.ref.content.l.${i}`] = l.digest));
  json.manifests?.forEach((m, i) => void (labels[`containerd.io/gc.ref.content.m.${i}`] = m.digest));
  return labels;
}

const decoder = new TextDecoder();
const MAX_JSON_BYTES = 4 * 1024 * 1024;

async function readJson<T>(read: ReadAt, e: TarEntry, what: string): Promise<T> {
  if (e.size > MAX_JSON_BYTES) throw new Error(`${what}: ${e.size} bytes, more than a manifest can be`);
  try {
    return JSON.parse(decoder.decode(await read(e.offset, e.size))) as T;
  } catch (err) {
    throw new Error(`${what}: not JSON: ${(err as Error).message}`);
  }
}

/** The plan of an OCI image layout: every image of index.json and the blobs under it that the tar has. */
async function planOciLayout(entries: ReadonlyMap<string, TarEntry>, read: ReadAt, baseName: string): Promise<ImportPlan> {
  const index = await readJson<ManifestJson>(read, resolveTarFile(entries, "index.json")!, "index.json");
  const plan: ImportPlan = { format: "oci-layout", blobs: [], images: [], warnings: [] };
  const seen = new Set<string>();
  const blobEntry = (digest: string) => resolveTarFile(entries, `blobs/${digest.replace(":", "/")}`);
  // Post-order: a parent after its children. A child the tar lacks (another platform's manifest) is skipped.
  async function walk(desc: Descriptor, required: boolean): Promise<boolean> {
    if (seen.has(desc.digest)) return true;
    const e = blobEntry(desc.digest);
    if (!e) {
      if (required) throw new Error(`blob ${desc.digest} (${desc.mediaType}) is not in the archive`);
      return false;
    }
    let labels: Record<string, string> = {};
    if (isIndex(desc.mediaType) || isManifest(desc.mediaType)) {
      const json = await readJson<ManifestJson>(read, e, `blob ${desc.digest}`);
      const children = isIndex(desc.mediaType) ? (json.manifests ?? []) : [...(json.config ? [json.config] : []), ...(json.layers ?? [])];
      for (const child of children) await walk(child, isManifest(desc.mediaType));
      labels = childGcLabels(json);
    }
    seen.add(desc.digest);
    plan.blobs.push({ desc: { mediaType: desc.mediaType, digest: desc.digest, size: e.size }, source: { kind: "tar", offset: e.offset }, labels });
    return true;
  }
  for (const m of index.manifests ?? []) {
    const name = ociImageName(m.annotations, baseName);
    if (!name) {
      plan.warnings.push(`image ${m.digest} has no name (annotation ${ANNOTATION_IMAGE_NAME} or ${ANNOTATION_REF_NAME})`);
      continue;
    }
    await walk(m, true);
    plan.images.push({ name, target: { mediaType: m.mediaType, digest: m.digest, size: m.size } });
  }
  return plan;
}

/** Pure: the OCI manifest of a docker-archive image, as JSON bytes. */
export function dockerArchiveManifest(config: Descriptor, layers: readonly Descriptor[]): Uint8Array {
  const d = (x: Descriptor) => ({ mediaType: x.mediaType, digest: x.digest, size: x.size });
  return new TextEncoder().encode(JSON.stringify({ schemaVersion: 2, mediaType: MEDIA.ociManifest, config: d(config), layers: layers.map(d) }));
}

/** Pure: a layer's media type from its first bytes (gzip, zstd, or plain tar). */
export function layerMediaType(head: Uint8Array): string {
  if (head[0] === 0x1f && head[1] === 0x8b) return `${MEDIA.ociLayer}+gzip`;
  if (head[0] === 0x28 && head[1] === 0xb5 && head[2] === 0x2f && head[3] === 0xfd) return `${MEDIA.ociLayer}+zstd`;
  return MEDIA.ociLayer;
}

/** sha256 of the bytes at offset, "sha256:<hex>". */
export type HashAt = (offset: number, size: number) => Promise<string>;

/** The plan of a docker-archive: one OCI manifest per manifest.json entry, named by its RepoTags. */
async function planDockerArchive(entries: ReadonlyMap<string, TarEntry>, read: ReadAt, hash: HashAt): Promise<ImportPlan> {
  const list = await readJson<{ Config: string; RepoTags?: string[] | null; Layers: string[] }[]>(
    read,
    resolveTarFile(entries, "manifest.json")!,
    "manifest.json",
  );
  if (!Array.isArray(list)) throw new Error("manifest.json: not a list of images");
  const plan: ImportPlan = { format: "docker-archive", blobs: [], images: [], warnings: [] };
  const seen = new Set<string>();
  const file = async (path: string, mediaType: (e: TarEntry) => Promise<string>): Promise<Descriptor> => {
    const e = resolveTarFile(entries, path);
    if (!e) throw new Error(`manifest.json names ${JSON.stringify(path)}, which is not in the archive`);
    const desc = { mediaType: await mediaType(e), digest: await hash(e.offset, e.size), size: e.size };
    if (!seen.has(desc.digest)) plan.blobs.push({ desc, source: { kind: "tar", offset: e.offset }, labels: {} });
    seen.add(desc.digest);
    return desc;
  };
  for (const img of list) {
    const names = (img.RepoTags ?? []).filter(isImageRef).map(normalizeImageRef);
    if (names.length === 0) {
      plan.warnings.push(`image ${img.Config} has no usable RepoTags (${JSON.stringify(img.RepoTags ?? [])})`);
      continue;
    }
    const layers: Descriptor[] = [];
    for (const l of img.Layers ?? []) layers.push(await file(l, async (e) => layerMediaType(await read(e.offset, Math.min(4, e.size)))));
    const config = await file(img.Config, async () => MEDIA.ociConfig);
    const data = dockerArchiveManifest(config, layers);
    const target = { mediaType: MEDIA.ociManifest, digest: await sha256Bytes(data), size: data.length };
    if (!seen.has(target.digest)) plan.blobs.push({ desc: target, source: { kind: "bytes", data }, labels: childGcLabels({ config, layers }) });
    seen.add(target.digest);
    for (const name of names) plan.images.push({ name, target });
  }
  return plan;
}

export async function sha256Bytes(data: Uint8Array): Promise<string> {
  return `sha256:${new Bun.CryptoHasher("sha256").update(data).digest("hex")}`;
}

/** The import plan of an indexed image tarball; throws naming what is missing when it is neither format. */
export async function planImport(entries: ReadonlyMap<string, TarEntry>, read: ReadAt, opts: { baseName: string; hash: HashAt }): Promise<ImportPlan> {
  if (resolveTarFile(entries, "index.json")) return planOciLayout(entries, read, opts.baseName);
  if (resolveTarFile(entries, "manifest.json")) return planDockerArchive(entries, read, opts.hash);
  throw new Error("neither an OCI image layout (index.json) nor a docker-archive (manifest.json)");
}
