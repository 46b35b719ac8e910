// Container spec hash (upstream kubecontainer.HashContainer, pkg/kubelet/container/helpers.go): only
// the fields whose change makes kuberuntime kill and recreate the container — name and image
// (pickFieldsToHash); resources are resized in place (resize.ts), the rest of an API pod's container
// is immutable. Computed exactly as upstream's, so the value in the io.kubernetes.container.hash
// annotation is the one an upstream kubelet writes: FNV-1a 32-bit over dump.ForHash (go-spew "%#v")
// of json.Marshal({"image","name"}), printed in hex (strconv.FormatUint(hash, 16)).

const utf8 = new TextEncoder();

export function fnv1a32(s: string | Uint8Array): number {
  const bytes = typeof s === "string" ? utf8.encode(s) : s;
  let h = 0x811c9dc5;
  // An indexed loop: the array iterator would be most of an idle resync's hashing.
  for (let i = 0; i < bytes.length; i++) h = Math.imul(h ^ bytes[i]!, 0x01000193);
  return h >>> 0;
}

/** Go's json.Marshal of a string: JSON.stringify, with <, >, & and U+2028/U+2029 escaped as Go's HTML-safe encoder does. */
function goJsonString(s: string): string {
  return JSON.stringify(s).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** Upstream HashContainer: name and image only. */
export function hashContainer(container: { name?: string; image?: string }): string {
  const json = utf8.encode(`{"image":${goJsonString(container.image ?? "")},"name":${goJsonString(container.name ?? "")}}`);
  // go-spew's "%#v" of a []byte (DisableCapacities): "([]uint8)[123 34 …]" — the bytes in decimal.
  return fnv1a32(`([]uint8)[${json.join(" ")}]`).toString(16);
}

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

/**
 * The hash earlier bunlet releases wrote: FNV-1a over a canonical JSON of the whole container spec.
 * A container started by one of them and still running under an unchanged spec carries it; it is
 * kept, not restarted, after an upgrade (containerChanged).
 */
export function legacyHashContainer(container: object): string {
  return fnv1a32(JSON.stringify(canonical(container))).toString(16);
}

/** Upstream containerChanged: the running container's hash is neither the spec's nor (an older bunlet's) the legacy one. */
export function containerChanged(container: { name?: string; image?: string }, runningHash: string | undefined): boolean {
  if (runningHash === undefined || runningHash === hashContainer(container)) return false;
  return runningHash !== legacyHashContainer(container);
}
