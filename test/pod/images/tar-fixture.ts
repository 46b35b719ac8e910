// A tar written in memory for the image-import tests: ustar headers, optional PAX path records.
const enc = new TextEncoder();

export interface FixtureEntry {
  name: string;
  data?: Uint8Array | string;
  type?: string;
  linkName?: string;
  /** Write the name as a PAX "path" record (and a short placeholder in the header). */
  pax?: boolean;
}

function octal(block: Uint8Array, start: number, length: number, v: number) {
  block.set(enc.encode(v.toString(8).padStart(length - 1, "0")), start);
}

function header(name: string, size: number, type: string, linkName = ""): Uint8Array {
  const b = new Uint8Array(512);
  b.set(enc.encode(name).subarray(0, 100), 0);
  octal(b, 100, 8, 0o644);
  octal(b, 124, 12, size);
  octal(b, 136, 12, 0);
  b.set(enc.encode(type), 156);
  b.set(enc.encode(linkName), 157);
  b.set(enc.encode("ustar\u000000"), 257);
  b.fill(32, 148, 156);
  let sum = 0;
  for (const x of b) sum += x;
  b.set(enc.encode(`${sum.toString(8).padStart(6, "0")}\u0000 `), 148);
  return b;
}

const pad = (n: number) => (512 - (n % 512)) % 512;

export function makeTar(entries: readonly FixtureEntry[], opts: { end?: boolean } = {}): Uint8Array {
  const parts: Uint8Array[] = [];
  for (const e of entries) {
    const data = typeof e.data === "string" ? enc.encode(e.data) : (e.data ?? new Uint8Array());
    if (e.pax) {
      const rec = (len: number) => `${len} path=${e.name}\n`;
      let len = rec(0).length;
      while (rec(len).length !== len) len = rec(len).length;
      const body = enc.encode(rec(len));
      parts.push(header("PaxHeader", body.length, "x"), body, new Uint8Array(pad(body.length)));
    }
    parts.push(header(e.pax ? "placeholder" : e.name, data.length, e.type ?? "0", e.linkName), data, new Uint8Array(pad(data.length)));
  }
  if (opts.end !== false) parts.push(new Uint8Array(1024));
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

/** A ReadAt over bytes in memory. */
export const readerOf = (bytes: Uint8Array) => async (offset: number, length: number) => bytes.slice(offset, offset + length);
