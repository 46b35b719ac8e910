// What the autonomy cache keeps (pure): the cached pods' secrets, configMaps and unexpired tokens,
// nothing else; and whether a write fits the size bound.
import { podConfigMapNames, podSecretNames, type RefPod } from "../api-references.ts";
import { cacheFileName, type CachedToken } from "./cache-entry.ts";

/** The files the pods need besides their own: their secrets' and configMaps' (`withSecrets` false: no secrets). */
export function referencedFiles(pods: readonly unknown[], withSecrets: boolean): Set<string> {
  const out = new Set<string>();
  for (const raw of pods) {
    const p = raw as RefPod & { metadata: { namespace: string } };
    const ns = p.metadata.namespace;
    try {
      if (withSecrets) for (const n of podSecretNames(p)) out.add(cacheFileName("Secret", { namespace: ns, name: n }));
      for (const n of podConfigMapNames(p)) out.add(cacheFileName("ConfigMap", { namespace: ns, name: n }));
    } catch {
      // a name no API server would accept cannot name a file: nothing of it is kept
    }
  }
  return out;
}

/** Whether a token file is still worth keeping: its pod is cached and it has not expired. */
export const keepToken = (t: CachedToken, podUids: ReadonlySet<string>, nowMs: number) => podUids.has(t.podUid) && t.expirationMs > nowMs;

/** Whether replacing `oldBytes` with `newBytes` keeps the cache within `maxBytes`. */
export const fits = (usedBytes: number, oldBytes: number, newBytes: number, maxBytes: number) => usedBytes - oldBytes + newBytes <= maxBytes;
