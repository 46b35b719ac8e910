// A bounded map whose entries expire, for the webhook caches (upstream caches token and
// SubjectAccessReview results for cacheTTL / cacheAuthorizedTTL / cacheUnauthorizedTTL). Time is
// injected; the oldest entry goes when the cache is full.
export interface TtlCache<V> {
  get(key: string): V | undefined;
  set(key: string, value: V, ttlMs: number): void;
  readonly size: number;
}

export function createTtlCache<V>(nowMs: () => number, maxEntries = 4096): TtlCache<V> {
  const entries = new Map<string, { value: V; expiresMs: number }>();
  return {
    get(key) {
      const e = entries.get(key);
      if (!e) return undefined;
      if (nowMs() >= e.expiresMs) {
        entries.delete(key);
        return undefined;
      }
      return e.value;
    },
    set(key, value, ttlMs) {
      if (ttlMs <= 0) return;
      entries.delete(key);
      if (entries.size >= maxEntries) entries.delete(entries.keys().next().value!);
      entries.set(key, { value, expiresMs: nowMs() + ttlMs });
    },
    get size() {
      return entries.size;
    },
  };
}
