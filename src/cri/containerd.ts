// containerd's own gRPC API on the CRI socket, for what the CRI cannot do: import an image from a
// tarball (ctr images import, containerd's client.Import). Blobs go into the content store with
// content Write, the image record with images Create (or Update), all in the CRI's namespace (k8s.io)
// and under a lease so containerd's GC does not collect a blob before the image references it.
//
// content Write is a bidirectional stream upstream; bunlet sends each blob as a few calls of at most
// WRITE_CALL_BYTES, each with all its messages at once (grpc.ts sendAll): the store's ingests are
// resumable by ref (the next call continues at the offset the last one reached), so memory stays one
// call's chunk whatever the blob's size, and no interleaved reply reading is needed. The last call
// commits with the expected digest: containerd verifies it and refuses a blob that does not match.
import { createCodec, type Codec } from "./codec.ts";
import containerdProtoPath from "./containerd.proto" with { type: "file" };
import { GrpcCode, GrpcError, type GrpcMetadata, type StreamingTransport, createUnixGrpcTransport } from "./grpc.ts";
import { readFileSync } from "node:fs";
import { socketPathOf } from "./client.ts";

/** The containerd namespace of the CRI plugin's images and containers. */
export const CRI_NAMESPACE = "k8s.io";
/** Bytes of a blob per content Write call (sent as messages of WRITE_MESSAGE_BYTES). */
export const WRITE_CALL_BYTES = 8 * 1024 * 1024;
export const WRITE_MESSAGE_BYTES = 1024 * 1024;

/** An OCI content descriptor (containerd.types.Descriptor). */
export interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
  annotations?: Record<string, string>;
}

export interface ContainerdImage {
  name: string;
  labels: Record<string, string>;
  target: Descriptor;
}

/** Reads `length` bytes of a blob from `offset` (the tarball it comes from). */
export type BlobReader = (offset: number, length: number) => Promise<Uint8Array>;

export interface ContainerdClient {
  /** The committed blob's size and labels; null when the store does not have it. */
  contentInfo(digest: string): Promise<{ size: number; labels: Record<string, string> } | null>;
  /** Writes and commits one blob under `lease` (verified against desc.digest by containerd); labels go on the committed blob. */
  writeBlob(ref: string, desc: Descriptor, read: BlobReader, lease: string, labels?: Record<string, string>): Promise<void>;
  getImage(name: string): Promise<ContainerdImage | null>;
  /** images Create, or Update when an image of that name exists (upstream client.Import does the same). */
  putImage(image: ContainerdImage, lease: string): Promise<void>;
  /** A lease that expires by itself after `expireMs` should bunlet die before deleting it. */
  createLease(id: string, expireMs: number, nowMs: number): Promise<string>;
  deleteLease(id: string): Promise<void>;
  close(): void;
}

const CONTENT = "/containerd.services.content.v1.Content/";
const IMAGES = "/containerd.services.images.v1.Images/";
const LEASES = "/containerd.services.leases.v1.Leases/";

export function createContainerdClient(opts: { endpoint: string; timeoutMs?: number; transport?: StreamingTransport; codec?: Codec }): ContainerdClient {
  const transport = opts.transport ?? createUnixGrpcTransport(socketPathOf(opts.endpoint));
  let codec = opts.codec;
  const c = (): Codec => (codec ??= createCodec(readFileSync(containerdProtoPath, "utf8"), { packageName: "containerd.bunlet" }));
  const timeoutMs = opts.timeoutMs ?? 120_000;
  const md = (lease?: string): GrpcMetadata =>
    lease
      ? [
          ["containerd-namespace", CRI_NAMESPACE],
          ["containerd-lease", lease],
        ]
      : [["containerd-namespace", CRI_NAMESPACE]];
  async function call<R>(path: string, reqType: string, resType: string, req: object, lease?: string): Promise<R> {
    return c().decode<R>(resType, await transport.unary(path, c().encode(reqType, req), timeoutMs, undefined, md(lease)));
  }
  const orNull = async <T>(p: Promise<T>): Promise<T | null> => {
    try {
      return await p;
    } catch (e) {
      if (e instanceof GrpcError && e.code === GrpcCode.NOT_FOUND) return null;
      throw e;
    }
  };

  async function writeBlob(ref: string, desc: Descriptor, read: BlobReader, lease: string, labels?: Record<string, string>): Promise<void> {
    const encode = (m: object) => c().encode("WriteContentRequest", m);
    let offset = 0;
    do {
      const messages: Uint8Array[] = [];
      const end = Math.min(desc.size, offset + WRITE_CALL_BYTES);
      for (let o = offset; o < end; o += WRITE_MESSAGE_BYTES) {
        const data = await read(o, Math.min(WRITE_MESSAGE_BYTES, end - o));
        messages.push(encode({ action: "WRITE", ref, total: desc.size, offset: o, data }));
      }
      offset = end;
      if (offset >= desc.size) messages.push(encode({ action: "COMMIT", ref, total: desc.size, offset, expected: desc.digest, labels: labels ?? {} }));
      try {
        await transport.sendAll(`${CONTENT}Write`, messages, timeoutMs, md(lease));
      } catch (e) {
        // Committed meanwhile (another import of the same layer): what we wanted is there.
        if (e instanceof GrpcError && e.code === GrpcCode.ALREADY_EXISTS) return;
        throw e;
      }
    } while (offset < desc.size);
  }

  return {
    async contentInfo(digest) {
      const r = await orNull(call<{ info?: { size: number; labels: Record<string, string> } }>(`${CONTENT}Info`, "InfoRequest", "InfoResponse", { digest }));
      return r?.info ? { size: r.info.size, labels: r.info.labels } : null;
    },
    writeBlob,
    async getImage(name) {
      const r = await orNull(call<{ image?: ContainerdImage }>(`${IMAGES}Get`, "GetImageRequest", "GetImageResponse", { name }));
      return r?.image ?? null;
    },
    async putImage(image, lease) {
      try {
        await call(`${IMAGES}Create`, "CreateImageRequest", "CreateImageResponse", { image }, lease);
      } catch (e) {
        if (!(e instanceof GrpcError && e.code === GrpcCode.ALREADY_EXISTS)) throw e;
        await call(`${IMAGES}Update`, "UpdateImageRequest", "UpdateImageResponse", { image }, lease);
      }
    },
    async createLease(id, expireMs, nowMs) {
      const labels = { "containerd.io/gc.expire": new Date(nowMs + expireMs).toISOString() };
      const r = await call<{ lease: { id: string } }>(`${LEASES}Create`, "LeaseCreateRequest", "LeaseCreateResponse", { id, labels });
      return r.lease.id;
    },
    async deleteLease(id) {
      await call(`${LEASES}Delete`, "LeaseDeleteRequest", "Empty", { id, sync: false });
    },
    close: () => transport.close(),
  };
}
