// HPACK (RFC 7541) for the CRI's HTTP/2 client: a full decoder (static + dynamic table, Huffman
// strings, table size updates) for the server's response headers and trailers, and the simplest
// valid encoder for requests — every field a literal without indexing, no Huffman — which keeps the
// server's decoder state untouched, so no encoder table has to be tracked.
import { HUFFMAN_BITS, HUFFMAN_CODES, STATIC_TABLE } from "./hpack-tables.ts";

export class HpackError extends Error {
  constructor(message: string) {
    super(`HPACK: ${message}`);
    this.name = "HpackError";
  }
}

const EOS = 256;
/** Huffman decoding tree: node i has children at tree[2i] (bit 0) and tree[2i+1] (bit 1); leaf = -(symbol+1). */
const tree: Int32Array = (() => {
  const t = new Int32Array(2 * 600);
  let nodes = 1;
  for (let sym = 0; sym <= EOS; sym++) {
    const code = HUFFMAN_CODES[sym]!;
    const bits = HUFFMAN_BITS[sym]!;
    let node = 0;
    for (let b = bits - 1; b >= 0; b--) {
      const slot = 2 * node + ((code >>> b) & 1);
      if (b === 0) t[slot] = -(sym + 1);
      else {
        if (t[slot] === 0) t[slot] = nodes++;
        node = t[slot]!;
      }
    }
  }
  return t;
})();

const utf8 = new TextDecoder();
const utf8Encoder = new TextEncoder();

export function huffmanDecode(bytes: Uint8Array): Uint8Array {
  const out: number[] = [];
  let node = 0;
  let depth = 0; // bits consumed since the last symbol
  let allOnes = true;
  for (const byte of bytes) {
    for (let b = 7; b >= 0; b--) {
      const bit = (byte >>> b) & 1;
      const next = tree[2 * node + bit]!;
      depth++;
      allOnes &&= bit === 1;
      if (next < 0) {
        const sym = -next - 1;
        if (sym === EOS) throw new HpackError("EOS symbol in a Huffman string");
        out.push(sym);
        node = 0;
        depth = 0;
        allOnes = true;
      } else if (next === 0) throw new HpackError("invalid Huffman code");
      else node = next;
    }
  }
  // Padding: the most significant bits of EOS, at most 7 (RFC 7541 5.2).
  if (depth > 7 || !allOnes) throw new HpackError("invalid Huffman padding");
  return Uint8Array.from(out);
}

export type HeaderList = [string, string][];

export interface HpackDecoder {
  /** Decodes one complete header block. */
  decode(block: Uint8Array): HeaderList;
}

/** `maxTableSize`: our SETTINGS_HEADER_TABLE_SIZE (default 4096), the bound of table size updates. */
export function createHpackDecoder(maxTableSize = 4096): HpackDecoder {
  const dynamic: { name: string; value: string; size: number }[] = []; // newest first
  let tableSize = 0;
  let tableMax = maxTableSize;
  const evict = () => {
    while (tableSize > tableMax && dynamic.length > 0) tableSize -= dynamic.pop()!.size;
  };
  const entry = (index: number): [string, string] => {
    if (index <= 0) throw new HpackError("header index 0");
    if (index <= STATIC_TABLE.length) {
      const [n, v] = STATIC_TABLE[index - 1]!;
      return [n, v];
    }
    const d = dynamic[index - STATIC_TABLE.length - 1];
    if (!d) throw new HpackError(`header index ${index} past the table`);
    return [d.name, d.value];
  };

  return {
    decode(block) {
      let i = 0;
      const integer = (prefixBits: number): number => {
        const max = (1 << prefixBits) - 1;
        let v = block[i++]! & max;
        if (v < max) return v;
        let m = 0;
        for (;;) {
          if (i >= block.length) throw new HpackError("truncated integer");
          const b = block[i++]!;
          v += (b & 0x7f) * 2 ** m;
          m += 7;
          if (b < 0x80) return v;
          if (m > 28) throw new HpackError("integer too large");
        }
      };
      const string = (): { text: string; bytes: number } => {
        if (i >= block.length) throw new HpackError("truncated string");
        const huffman = (block[i]! & 0x80) !== 0;
        const len = integer(7);
        if (i + len > block.length) throw new HpackError("truncated string");
        const raw = block.subarray(i, i + len);
        i += len;
        const bytes = huffman ? huffmanDecode(raw) : raw;
        return { text: utf8.decode(bytes), bytes: bytes.length };
      };
      const out: HeaderList = [];
      while (i < block.length) {
        const b = block[i]!;
        if (b & 0x80) {
          out.push(entry(integer(7)));
        } else if ((b & 0xe0) === 0x20) {
          const size = integer(5);
          if (size > maxTableSize) throw new HpackError(`table size update ${size} above ${maxTableSize}`);
          tableMax = size;
          evict();
        } else {
          const indexing = (b & 0xc0) === 0x40;
          const nameIndex = integer(indexing ? 6 : 4);
          let name: string;
          let nameBytes: number;
          if (nameIndex === 0) ({ text: name, bytes: nameBytes } = string());
          else {
            name = entry(nameIndex)[0];
            nameBytes = utf8Encoder.encode(name).length;
          }
          const value = string();
          out.push([name, value.text]);
          if (indexing) {
            const size = 32 + nameBytes + value.bytes;
            dynamic.unshift({ name, value: value.text, size });
            tableSize += size;
            evict();
          }
        }
      }
      return out;
    },
  };
}

/** A header block of literal fields without indexing (new names, raw strings): valid for any decoder state. */
export function encodeHeaders(headers: readonly (readonly [string, string])[]): Uint8Array {
  const parts: number[] = [];
  const integer = (v: number, prefixBits: number, first: number) => {
    const max = (1 << prefixBits) - 1;
    if (v < max) return void parts.push(first | v);
    parts.push(first | max);
    v -= max;
    while (v >= 0x80) {
      parts.push((v & 0x7f) | 0x80);
      v = Math.floor(v / 128);
    }
    parts.push(v);
  };
  const string = (s: string) => {
    const b = utf8Encoder.encode(s);
    integer(b.length, 7, 0);
    for (const x of b) parts.push(x);
  };
  for (const [name, value] of headers) {
    parts.push(0x00);
    string(name);
    string(value);
  }
  return Uint8Array.from(parts);
}
