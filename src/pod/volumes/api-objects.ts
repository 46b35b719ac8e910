// What the API server holds for a pod at one sync (the secrets and configMaps it references, the
// tokens its projected volumes ask for), and the payloads built from it — upstream secret.MakePayload,
// configmap.MakePayload and projected collectData. Pure: the snapshot is fetched beforehand
// (src/pod/apiobjects), so volume set-up and env stay synchronous and testable.
import type { PayloadFile } from "./atomic-writer.ts";
import { downwardApiPayload, type DownwardApiItem, type DownwardContext } from "./downward-api.ts";
import type { ClaimedVolume } from "./persistent-volume.ts";

export interface SecretObject {
  /** base64 values, as the API serves them. */
  data?: Record<string, string>;
  type?: string;
}
export interface ConfigMapObject {
  data?: Record<string, string>;
  /** base64 values. */
  binaryData?: Record<string, string>;
}

/** An object the API server does not have (404): an `optional` reference then resolves to nothing. */
export class ObjectNotFoundError extends Error {
  override name = "ObjectNotFoundError";
  constructor(kind: "secret" | "configmap", name: string) {
    // upstream apierrors.NewNotFound(schema.GroupResource{Resource: kind}, name)
    super(`${kind} "${name}" not found`);
  }
}

/** A clusterTrustBundle projection (core/v1 ClusterTrustBundleProjection). */
export interface ClusterTrustBundleProjection {
  name?: string;
  signerName?: string;
  labelSelector?: { matchLabels?: Record<string, string>; matchExpressions?: { key: string; operator: string; values?: string[] }[] };
  optional?: boolean;
  path: string;
}

/** What a clusterTrustBundle projection selects (the snapshot's key for its anchors). */
export const trustBundleKey = (p: Omit<ClusterTrustBundleProjection, "path">) =>
  p.name !== undefined
    ? `name\n${p.name}\n${p.optional === true}`
    : `signer\n${p.signerName ?? ""}\n${JSON.stringify(p.labelSelector ?? null)}\n${p.optional === true}`;

/** A ServiceAccountToken projection's request identity (the token manager's cache key). */
export const tokenKey = (audience: string | undefined, expirationSeconds: number) => `${audience ?? ""}\n${expirationSeconds}`;

export interface PodApiObjects {
  namespace: string;
  secrets: ReadonlyMap<string, SecretObject | Error>;
  configMaps: ReadonlyMap<string, ConfigMapObject | Error>;
  /** TokenRequest results by tokenKey. */
  tokens: ReadonlyMap<string, string | Error>;
  /** Normalized PEM trust anchors by trustBundleKey (clusterTrustBundle projections). */
  trustBundles?: ReadonlyMap<string, string | Error>;
  /** The pod's persistentVolumeClaim volumes by volume name: the bound PV, or upstream's processing error. */
  claims?: ReadonlyMap<string, ClaimedVolume | Error>;
}

const isNotFound = (e: unknown) => e instanceof ObjectNotFoundError;

/** The secret named `name`; throws the fetch error (upstream's texts), or when nothing was fetched. */
export function lookupSecret(objs: PodApiObjects | undefined, name: string): SecretObject {
  const v = objs?.secrets.get(name);
  if (v === undefined) throw new Error(`couldn't get secret ${objs?.namespace ?? ""}/${name}, no kubeClient defined`);
  if (v instanceof Error) throw v;
  return v;
}

export function lookupConfigMap(objs: PodApiObjects | undefined, name: string): ConfigMapObject {
  const v = objs?.configMaps.get(name);
  if (v === undefined) throw new Error(`couldn't get configMap ${objs?.namespace ?? ""}/${name}, no kubeClient defined`);
  if (v instanceof Error) throw v;
  return v;
}

/** Resolves an optional reference: a missing object is `undefined` when optional, else the error. */
function orMissing<T>(get: () => T, optional: boolean | undefined): T | undefined {
  try {
    return get();
  } catch (e) {
    if (optional && isNotFound(e)) return undefined;
    throw e;
  }
}

export interface KeyToPath {
  key: string;
  path: string;
  mode?: number;
}

/** upstream MakePayload: every key (defaultMode) or the listed items; a missing listed key fails unless optional. */
function makePayload(
  values: Record<string, Uint8Array | string>,
  items: readonly KeyToPath[] | undefined,
  defaultMode: number,
  optional: boolean | undefined,
  missingKey: (k: string) => string,
): Record<string, PayloadFile> {
  const out: Record<string, PayloadFile> = {};
  if (!items || items.length === 0) {
    for (const [k, v] of Object.entries(values)) out[k] = { content: v, mode: defaultMode };
    return out;
  }
  for (const it of items) {
    const v = values[it.key];
    if (v === undefined) {
      if (optional) continue;
      throw new Error(missingKey(it.key));
    }
    out[it.path] = { content: v, mode: it.mode ?? defaultMode };
  }
  return out;
}

const b64 = (v: string) => new Uint8Array(Buffer.from(v, "base64"));
const secretValues = (s: SecretObject | undefined) => Object.fromEntries(Object.entries(s?.data ?? {}).map(([k, v]) => [k, b64(v)]));
const configMapValues = (c: ConfigMapObject | undefined): Record<string, Uint8Array | string> => ({
  ...Object.fromEntries(Object.entries(c?.binaryData ?? {}).map(([k, v]) => [k, b64(v)])),
  ...(c?.data ?? {}),
});

export interface SecretVolumeSource {
  secretName: string;
  items?: KeyToPath[];
  defaultMode?: number;
  optional?: boolean;
}
export interface ConfigMapVolumeSource {
  name: string;
  items?: KeyToPath[];
  defaultMode?: number;
  optional?: boolean;
}

/** The files of a secret volume (upstream secret plugin SetUpAt; defaultMode 0644). */
export function secretPayload(src: SecretVolumeSource, objs: PodApiObjects | undefined): Record<string, PayloadFile> {
  const s = orMissing(() => lookupSecret(objs, src.secretName), src.optional);
  return makePayload(secretValues(s), src.items, src.defaultMode ?? 0o644, src.optional, (k) => `references non-existent secret key: ${k}`);
}

/** The files of a configMap volume (data and binaryData; upstream configmap plugin SetUpAt). */
export function configMapPayload(src: ConfigMapVolumeSource, objs: PodApiObjects | undefined): Record<string, PayloadFile> {
  const c = orMissing(() => lookupConfigMap(objs, src.name), src.optional);
  return makePayload(configMapValues(c), src.items, src.defaultMode ?? 0o644, src.optional, (k) => `configmap references non-existent config key: ${k}`);
}

export interface ProjectedSource {
  downwardAPI?: { items?: DownwardApiItem[] };
  secret?: { name: string; items?: KeyToPath[]; optional?: boolean };
  configMap?: { name: string; items?: KeyToPath[]; optional?: boolean };
  serviceAccountToken?: { audience?: string; expirationSeconds?: number; path: string };
  clusterTrustBundle?: ClusterTrustBundleProjection;
}

/**
 * upstream projected collectData: every source's files merged in order; the errors of all failed
 * sources are aggregated (one error: its message; several: "[a, b]"), so one missing secret does
 * not hide another.
 */
export function projectedPayload(
  sources: readonly ProjectedSource[],
  defaultMode: number | undefined,
  objs: PodApiObjects | undefined,
  ctx: DownwardContext,
  hasFsGroup = false,
): Record<string, PayloadFile> {
  const mode = defaultMode ?? 0o644;
  const out: Record<string, PayloadFile> = {};
  const errors: string[] = [];
  for (const s of sources) {
    try {
      if (s.secret)
        Object.assign(out, secretPayload({ secretName: s.secret.name, items: s.secret.items, optional: s.secret.optional, defaultMode: mode }, objs));
      else if (s.configMap) Object.assign(out, configMapPayload({ ...s.configMap, defaultMode: mode }, objs));
      else if (s.downwardAPI) Object.assign(out, downwardApiPayload(s.downwardAPI.items ?? [], mode, ctx));
      else if (s.serviceAccountToken) {
        const t = s.serviceAccountToken;
        const v = objs?.tokens.get(tokenKey(t.audience, t.expirationSeconds ?? 3600));
        if (v === undefined) throw new Error(`no token requested for service account ${ctx.pod.spec.serviceAccountName ?? ""} (no kubeClient defined)`);
        if (v instanceof Error) throw v;
        // With an fsGroup the token starts 0600 and SetVolumeOwnership adds group read (upstream).
        out[t.path] = { content: v, mode: hasFsGroup ? 0o600 : mode };
      } else if (s.clusterTrustBundle) {
        const v = objs?.trustBundles?.get(trustBundleKey(s.clusterTrustBundle));
        // No API server (or no manager): upstream's NoopManager.
        if (v === undefined) throw new Error("ClusterTrustBundle projection is not supported in static kubelet mode");
        if (v instanceof Error) throw v;
        // As for tokens: 0600 when the volume gets an owner (fsGroup), then group read is added.
        out[s.clusterTrustBundle.path] = { content: v, mode: hasFsGroup ? 0o600 : mode };
      }
    } catch (e) {
      errors.push((e as Error).message);
    }
  }
  if (errors.length === 1) throw new Error(errors[0]);
  if (errors.length > 1) throw new Error(`[${errors.join(", ")}]`);
  return out;
}
