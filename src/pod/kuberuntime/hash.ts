// Container spec hash (upstream kubecontainer.HashContainer): a change of the container's spec makes
// kuberuntime kill and recreate it. FNV-1a 32-bit over a canonical JSON (sorted keys) of the spec, printed
// in hex like upstream's strconv.FormatUint(hash, 16).

function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (v && typeof v === "object") {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) {
      const x = (v as Record<string, unknown>)[k];
      if (x !== undefined) out[k] = canonical(x);
    }
    return out;
  }
  return v;
}

const utf8 = new TextEncoder();

export function fnv1a32(s: string): number {
  const bytes = utf8.encode(s);
  let h = 0x811c9dc5;
  // An indexed loop: the array iterator would be most of an idle resync's hashing.
  for (let i = 0; i < bytes.length; i++) h = Math.imul(h ^ bytes[i]!, 0x01000193);
  return h >>> 0;
}

export function hashContainer(container: object): string {
  return fnv1a32(JSON.stringify(canonical(container))).toString(16);
}
