// The on-disk format of the node autonomy cache (no upstream counterpart; OpenYurt's YurtHub local
// cache and KubeEdge's MetaManager keep the same objects): one JSON file per object under
// <rootDir>/autonomy, an envelope { version, kind, savedAt, object } validated with zod at load.
// Pure: file names, encoding and validation; the reads and writes are store.ts's.
import { createHash } from "node:crypto";
import { z } from "zod";
import { persistentVolumeClaimSchema, persistentVolumeSchema } from "../volumes/index.ts";
import { csiDriverObjectSchema, volumeAttachmentSchema } from "../volumes/csi/index.ts";

export const CACHE_VERSION = 1;

const CACHE_KINDS = [
  "Pod",
  "Secret",
  "ConfigMap",
  "PersistentVolumeClaim",
  "PersistentVolume",
  "CSIDriver",
  "VolumeAttachment",
  "Token",
  "Node",
  "Services",
] as const;
export type CacheKind = (typeof CACHE_KINDS)[number];

/** A service account token as TokenRequest issued it for one pod and one (audience, lifetime). */
export interface CachedToken {
  namespace: string;
  podUid: string;
  /** The pod volume code's tokenKey (audience + "\n" + expirationSeconds). */
  key: string;
  token: string;
  /** Epoch ms; the token is not served past it. */
  expirationMs: number;
}

const name = z.string().regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, "a DNS name (lower case letters, digits, '-', '.')");
const meta = z.object({ name, namespace: name, uid: z.string().min(1) }).passthrough();
const strings = z.record(z.string(), z.string());

const objectSchemas = {
  Pod: z.object({ metadata: meta, spec: z.object({}).passthrough() }).passthrough(),
  Secret: z.object({ metadata: meta.partial({ uid: true }), data: strings.optional(), type: z.string().optional() }).passthrough(),
  ConfigMap: z.object({ metadata: meta.partial({ uid: true }), data: strings.optional(), binaryData: strings.optional() }).passthrough(),
  // As the claim resolution reads them (volumes/persistent-volume.ts), named as their files are.
  PersistentVolumeClaim: persistentVolumeClaimSchema.extend({ metadata: persistentVolumeClaimSchema.shape.metadata.extend({ name, namespace: name }) }),
  PersistentVolume: persistentVolumeSchema.extend({ metadata: persistentVolumeSchema.shape.metadata.extend({ name }) }),
  // As the CSI volume set-up reads them (volumes/csi/csi-driver-object.ts); an attachment with the PV it
  // attaches, which is what keeps it.
  CSIDriver: csiDriverObjectSchema.extend({ metadata: csiDriverObjectSchema.shape.metadata.extend({ name }) }),
  VolumeAttachment: volumeAttachmentSchema.extend({
    metadata: volumeAttachmentSchema.shape.metadata.extend({ name }),
    spec: z.looseObject({ source: z.looseObject({ persistentVolumeName: name }) }),
  }),
  Token: z.object({ namespace: name, podUid: z.string().min(1), key: z.string(), token: z.string().min(1), expirationMs: z.number().int() }),
  Node: z.object({ metadata: z.object({ name }).passthrough() }).passthrough(),
  Services: z.object({
    items: z.array(
      z.object({ metadata: z.object({ name, namespace: name.optional() }).passthrough(), spec: z.object({}).passthrough().optional() }).passthrough(),
    ),
  }),
} satisfies Record<CacheKind, z.ZodTypeAny>;

const envelope = z.object({
  version: z.literal(CACHE_VERSION),
  kind: z.enum(CACHE_KINDS),
  savedAt: z.string(),
  object: z.unknown(),
});

export interface CacheEntry {
  kind: CacheKind;
  /** The file's name inside the cache directory. */
  file: string;
  object: unknown;
}

/** The file an object is kept in; names are DNS names, so "_" separates parts without ambiguity. */
export function cacheFileName(kind: CacheKind, key: { namespace?: string; name?: string; uid?: string; tokenKey?: string }): string {
  switch (kind) {
    case "Pod":
      return `pod_${safe(key.uid)}.json`;
    case "Secret":
    case "ConfigMap":
    case "PersistentVolumeClaim":
      return `${kind.toLowerCase()}_${safe(key.namespace)}_${safe(key.name)}.json`;
    case "PersistentVolume":
    case "CSIDriver":
    case "VolumeAttachment":
      return `${kind.toLowerCase()}_${safe(key.name)}.json`;
    case "Token":
      return `token_${safe(key.uid)}_${createHash("sha256")
        .update(key.tokenKey ?? "")
        .digest("hex")
        .slice(0, 16)}.json`;
    case "Node":
      return "node.json";
    case "Services":
      return "services.json";
  }
}

/** A UID or name as part of a file name: only what such names may hold, never a path separator. */
function safe(s: string | undefined): string {
  if (!s || !/^[A-Za-z0-9.-]+$/.test(s) || s === "." || s === "..") throw new Error(`autonomy cache: "${s}" cannot name a cache file`);
  return s;
}

/** The file's text for `object`. */
export function encodeCacheEntry(kind: CacheKind, object: unknown, savedAtMs: number): string {
  return JSON.stringify({ version: CACHE_VERSION, kind, savedAt: new Date(savedAtMs).toISOString(), object });
}

export class CacheEntryError extends Error {
  override name = "CacheEntryError";
}

const describe = (issues: z.ZodIssue[]) =>
  issues
    .slice(0, 3)
    .map((i) => `${i.path.length ? i.path.join(".") : "(root)"}: ${i.message}`)
    .join("; ");

/** The entry a cache file holds, or a CacheEntryError naming the file and the field that is wrong. */
export function parseCacheEntry(file: string, text: string): CacheEntry | CacheEntryError {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return new CacheEntryError(`autonomy cache file ${file}: not JSON`); // the parser's message may quote the text (a secret)
  }
  const env = envelope.safeParse(raw);
  if (!env.success) return new CacheEntryError(`autonomy cache file ${file}: ${describe(env.error.issues)}`);
  const obj = objectSchemas[env.data.kind].safeParse(env.data.object);
  if (!obj.success) return new CacheEntryError(`autonomy cache file ${file}: object.${describe(obj.error.issues)}`);
  const expected = expectedFileName(env.data.kind, obj.data);
  if (expected !== file) return new CacheEntryError(`autonomy cache file ${file}: holds a ${env.data.kind} that belongs in ${expected}`);
  return { kind: env.data.kind, file, object: obj.data };
}

function expectedFileName(kind: CacheKind, o: any): string {
  try {
    if (kind === "Token") return cacheFileName(kind, { uid: o.podUid, tokenKey: o.key });
    return cacheFileName(kind, { namespace: o.metadata?.namespace, name: o.metadata?.name, uid: o.metadata?.uid });
  } catch (e) {
    return `(none: ${(e as Error).message})`;
  }
}

/** The expiry (epoch ms) of a JWT's `exp` claim, or undefined when `token` is not a JWT with one. */
export function jwtExpirationMs(token: string): number | undefined {
  const payload = token.split(".")[1];
  if (!payload) return undefined;
  try {
    const claims = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as { exp?: unknown };
    return typeof claims.exp === "number" ? claims.exp * 1000 : undefined;
  } catch {
    return undefined;
  }
}
