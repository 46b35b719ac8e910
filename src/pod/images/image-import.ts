// One image tarball into the runtime (containerd's client.Import, as `ctr images import` and k3s
// do it): the tar indexed by its headers (tar.ts), planned (image-archive.ts), each blob the content
// store lacks written from the file by offset, then one image record per name pointing at its
// manifest or index, labelled pinned (io.cri-containerd.pinned, which CRI plugins from containerd
// 1.7 report as Image.pinned). All under one lease, deleted at the end, so containerd's GC cannot take
// a blob between its write and the image that references it. Nothing is unpacked here: the CRI
// plugin unpacks an image's layers into the snapshotter when a container is first created from it
// (pkg/cri/opts/container.go WithNewSnapshot, on NotFound). .tar.gz and .tgz are decompressed to a
// temporary .tar next to the work files first (a gzip stream cannot be read by offset).
import { createReadStream, createWriteStream } from "node:fs";
import { mkdir, open, rm, stat } from "node:fs/promises";
import { basename, join } from "node:path";
import { pipeline } from "node:stream/promises";
import { createGunzip } from "node:zlib";
import type { ContainerdClient } from "../../cri/containerd.ts";
import { type ImportPlan, planImport } from "./image-archive.ts";
import { indexTar, type ReadAt } from "./tar.ts";

/** containerd's CRI label that pins an image against removal by the kubelet's image GC. */
export const PINNED_LABEL = "io.cri-containerd.pinned";
/** A lease outlives a stuck import by at most this long (containerd.io/gc.expire). */
const LEASE_EXPIRE_MS = 60 * 60_000;
const HASH_CHUNK_BYTES = 1024 * 1024;

export interface ImportResult {
  file: string;
  format: ImportPlan["format"];
  /** The image names created or updated. */
  images: string[];
  blobs: number;
  /** Blobs written (the rest were in the content store already) and their bytes. */
  written: number;
  writtenBytes: number;
  warnings: string[];
}

export interface ImportDeps {
  containerd: ContainerdClient;
  /** Where .tar.gz files are decompressed (removed after the import). */
  workDir: string;
  now: () => number;
  /** Label the images pinned (default true: the import directory's images are kept by image GC). */
  pin?: boolean;
}

/** An archive's base name for tag-only OCI ref names: its file name without .tar/.tar.gz/.tgz, lowercase. */
export function archiveBaseName(file: string): string {
  return basename(file)
    .replace(/(\.tar|\.tar\.gz|\.tgz)$/, "")
    .toLowerCase()
    .replace(/[^a-z0-9._-]/g, "-");
}

export const isCompressed = (file: string) => /\.(tar\.gz|tgz)$/.test(file);

async function gunzipTo(file: string, workDir: string): Promise<string> {
  await mkdir(workDir, { recursive: true, mode: 0o700 });
  const out = join(workDir, `${archiveBaseName(file)}-${process.pid}.tar`);
  await pipeline(createReadStream(file), createGunzip(), createWriteStream(out, { mode: 0o600 }));
  return out;
}

/** Imports every named image of the tarball at `file` into the CRI namespace; throws naming what failed. */
export async function importImageTarball(file: string, deps: ImportDeps): Promise<ImportResult> {
  const tarPath = isCompressed(file) ? await gunzipTo(file, deps.workDir) : file;
  const fh = await open(tarPath, "r");
  try {
    const size = (await stat(tarPath)).size;
    const read: ReadAt = async (offset, length) => {
      const buf = new Uint8Array(length);
      const { bytesRead } = await fh.read(buf, 0, length, offset);
      if (bytesRead !== length) throw new Error(`short read at ${offset}: ${bytesRead} of ${length} bytes (file changed?)`);
      return buf;
    };
    const hash = async (offset: number, length: number) => {
      const h = new Bun.CryptoHasher("sha256");
      for (let o = 0; o < length; o += HASH_CHUNK_BYTES) h.update(await read(offset + o, Math.min(HASH_CHUNK_BYTES, length - o)));
      return `sha256:${h.digest("hex")}`;
    };
    const plan = await planImport(await indexTar(read, size), read, { baseName: archiveBaseName(file), hash });
    return { file, ...(await applyPlan(plan, read, deps)) };
  } finally {
    await fh.close();
    if (tarPath !== file) await rm(tarPath, { force: true });
  }
}

/** The plan's blobs the store lacks, then its image records, under one lease. */
async function applyPlan(plan: ImportPlan, read: ReadAt, deps: ImportDeps): Promise<Omit<ImportResult, "file">> {
  const { containerd } = deps;
  const lease = await containerd.createLease(`bunlet-import-${deps.now()}-${Math.random().toString(36).slice(2, 8)}`, LEASE_EXPIRE_MS, deps.now());
  let written = 0;
  let writtenBytes = 0;
  try {
    for (const b of plan.blobs) {
      if (await containerd.contentInfo(b.desc.digest)) continue;
      const source = b.source;
      const reader: ReadAt = source.kind === "tar" ? (o, n) => read(source.offset + o, n) : async (o, n) => source.data.subarray(o, o + n);
      await containerd.writeBlob(`bunlet-import-${b.desc.digest}`, b.desc, reader, lease, b.labels);
      written++;
      writtenBytes += b.desc.size;
    }
    const labels: Record<string, string> = deps.pin === false ? {} : { [PINNED_LABEL]: "pinned" };
    for (const img of plan.images) await containerd.putImage({ name: img.name, labels, target: img.target }, lease);
  } finally {
    await containerd.deleteLease(lease).catch(() => {});
  }
  return { format: plan.format, images: plan.images.map((i) => i.name), blobs: plan.blobs.length, written, writtenBytes, warnings: plan.warnings };
}
