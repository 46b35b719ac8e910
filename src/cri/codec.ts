// Protobuf codec for the CRI messages: the embedded api.proto parsed by protobufjs at client creation.
// The .proto is imported as a file so `bun build --compile` embeds it (the path becomes a $bunfs path).
//
// List replies are decoded entry by entry through a memo keyed by each entry's bytes: the PLEG
// relists every second and an idle node's entries do not change, so an entry seen in a recent
// reply is not decoded again (measured with 100 pods, ListContainers + ListPodSandbox: see
// decodeRepeated). Memoized entries are shared between replies and so deep-frozen: a caller that
// mutated one would corrupt the next listing; freezing turns that into a TypeError at the culprit.
import { readFileSync } from "node:fs";
import protobuf from "protobufjs";
import apiProtoPath from "./api.proto" with { type: "file" };

export interface Codec {
  encode(type: string, value: object): Uint8Array;
  decode<T>(type: string, bytes: Uint8Array): T;
}

const DECODE_OPTIONS: protobuf.IConversionOptions = {
  longs: Number,
  enums: String,
  bytes: Uint8Array as unknown as protobuf.IConversionOptions["bytes"],
  defaults: true,
  arrays: true,
  objects: true,
};

/**
 * Replies whose only field is a repeated message (field 1), decoded through the entry memo; `maps`:
 * the entry's map fields (labels, annotations), whose entries containerd writes in Go's random map
 * order — the memo key ignores their order (entryKey).
 */
const MEMOIZED_LISTS: Record<string, { field: string; entry: string; maps: readonly number[] }> = {
  ListContainersResponse: { field: "containers", entry: "Container", maps: [8, 9] },
  ListPodSandboxResponse: { field: "items", entry: "PodSandbox", maps: [5, 6] },
};

// Two 32-bit hashes of a byte range, FNV-1a and a multiply-xorshift step, seeded and returned through
// these two variables: 64 bits per key without allocating. Bun.hash.wyhash of a subarray per field
// and a BigInt sum costs the same CPU but ~25 views and BigInts of garbage per entry, 5,000 a second
// at 100 pods, for the idle agent's collector to sweep.
let hashA = 0;
let hashB = 0;
function hashRange(bytes: Uint8Array, start: number, end: number, seedA: number, seedB: number): void {
  let a = seedA;
  let b = seedB;
  let k = start;
  // Four bytes a step (little-endian word), the tail byte by byte.
  for (; k + 4 <= end; k += 4) {
    const x = bytes[k]! | (bytes[k + 1]! << 8) | (bytes[k + 2]! << 16) | (bytes[k + 3]! << 24);
    a = Math.imul(a ^ x, 0x01000193);
    a ^= a >>> 15;
    b = Math.imul((b + x) | 0, 0x85ebca6b);
    b ^= b >>> 13;
  }
  for (; k < end; k++) {
    const x = bytes[k]!;
    a = Math.imul(a ^ x, 0x01000193);
    b = Math.imul((b + x + 0x9e3779b9) | 0, 0x85ebca6b);
    b ^= b >>> 13;
  }
  // The length, so ranges that differ only by trailing zero bytes differ.
  hashA = Math.imul(a ^ (end - start), 0x01000193);
  hashB = b;
}
const SEED_A = 0x811c9dc5 | 0;
const SEED_B = 0x2545f491;

/**
 * A key for one encoded entry that is the same for the same content whatever the order of the
 * entries of its map fields: the other fields (the id among them) hashed in order, the map entries'
 * sizes summed — an id's labels and annotations never change.
 * Undefined for bytes that do not parse as a message (then the entry is decoded, not memoized).
 */
export function entryKey(bytes: Uint8Array, maps: readonly number[]): string | undefined {
  let i = 0;
  // Up to 10 bytes (an int64 field's value); tags and lengths are small, so the value stays exact for them.
  const varint = (): number => {
    let v = 0;
    let mul = 1;
    for (let n = 0; n < 10; n++) {
      if (i >= bytes.length) return -1;
      const b = bytes[i++]!;
      v += (b & 0x7f) * mul;
      if (b < 0x80) return v;
      mul *= 128;
    }
    return -1;
  };
  let orderedA = SEED_A;
  let orderedB = SEED_B;
  let mapSumA = 0;
  let mapSumB = 0;
  let mapCount = 0;
  while (i < bytes.length) {
    const start = i;
    const tag = varint();
    if (tag < 0) return undefined;
    const wire = tag & 7;
    if (wire === 0) {
      if (varint() < 0) return undefined;
    } else if (wire === 1) i += 8;
    else if (wire === 5) i += 4;
    else if (wire === 2) {
      const len = varint();
      if (len < 0) return undefined;
      i += len;
    } else return undefined;
    if (i > bytes.length) return undefined;
    if (wire === 2 && maps.includes(Math.floor(tag / 8))) {
      // Labels and annotations are fixed when a container or sandbox is created (the CRI has no call
      // to change them) and the id is among the hashed fields: their entries count by size only.
      // Hashing them would be half the relist's decoding at 100 pods.
      mapSumA = (mapSumA + (i - start)) | 0;
      mapSumB = (mapSumB + Math.imul(i - start, 0x9e3779b1)) | 0;
      mapCount++;
    } else {
      hashRange(bytes, start, i, orderedA, orderedB);
      orderedA = hashA;
      orderedB = hashB;
    }
  }
  return `${(orderedA >>> 0).toString(36)}.${(orderedB >>> 0).toString(36)}.${(mapSumA >>> 0).toString(36)}.${(mapSumB >>> 0).toString(36)}.${mapCount}.${bytes.length}`;
}
/**
 * An entry stays memoized while a reply of its type held it within this long. By time, not by count
 * of replies: a burst of one-pod listings (pod status after a restart) must not evict the relist's.
 */
const MEMO_TTL_MS = 30_000;

export function deepFreeze<T>(v: T): T {
  if (v === null || typeof v !== "object" || ArrayBuffer.isView(v) || Object.isFrozen(v)) return v;
  for (const x of Object.values(v)) deepFreeze(x);
  return Object.freeze(v);
}

/**
 * The field-1 length-delimited entries of a message, as subarrays; undefined when the message holds
 * anything else (then the caller decodes it whole).
 */
export function repeatedEntries(bytes: Uint8Array): Uint8Array[] | undefined {
  const out: Uint8Array[] = [];
  let i = 0;
  const varint = (): number => {
    let v = 0;
    let mul = 1;
    for (;;) {
      if (i >= bytes.length) return -1;
      const b = bytes[i++]!;
      v += (b & 0x7f) * mul;
      if (b < 0x80) return v;
      mul *= 128;
      if (mul > 2 ** 49) return -1;
    }
  };
  while (i < bytes.length) {
    if (varint() !== ((1 << 3) | 2)) return undefined; // not field 1, wire type 2
    const len = varint();
    if (len < 0 || i + len > bytes.length) return undefined;
    out.push(bytes.subarray(i, i + len));
    i += len;
  }
  return out;
}

interface Memo {
  entries: Map<string, { value: object; usedMs: number }>;
  prunedMs: number;
}

/** `opts.packageName`: the proto package whose messages the type names are in (default the CRI's, runtime.v1). */
export function createCodec(protoText: string = readFileSync(apiProtoPath, "utf8"), opts: { nowMs?: () => number; packageName?: string } = {}): Codec {
  const prefix = `${opts.packageName ?? "runtime.v1"}.`;
  const nowMs = opts.nowMs ?? (() => performance.now());
  const root = protobuf.parse(protoText).root;
  const types = new Map<string, protobuf.Type>();
  const memos = new Map<string, Memo>();
  const type = (name: string): protobuf.Type => {
    let t = types.get(name);
    if (!t) {
      t = root.lookupType(prefix + name);
      types.set(name, t);
    }
    return t;
  };
  const decodeWhole = <T>(name: string, bytes: Uint8Array): T => {
    const t = type(name);
    return t.toObject(t.decode(bytes), DECODE_OPTIONS) as T;
  };

  function decodeRepeated(name: string, list: { field: string; entry: string; maps: readonly number[] }, bytes: Uint8Array): object | undefined {
    const raw = repeatedEntries(bytes);
    if (!raw) return undefined;
    const now = nowMs();
    let memo = memos.get(name);
    if (!memo) memos.set(name, (memo = { entries: new Map(), prunedMs: now }));
    const t = type(list.entry);
    const items = raw.map((b) => {
      const key = entryKey(b, list.maps);
      const hit = key === undefined ? undefined : memo.entries.get(key);
      if (hit) {
        hit.usedMs = now;
        return hit.value;
      }
      const value = deepFreeze(t.toObject(t.decode(b), DECODE_OPTIONS));
      if (key !== undefined) memo.entries.set(key, { value, usedMs: now });
      return value;
    });
    if (now - memo.prunedMs >= MEMO_TTL_MS / 4) {
      memo.prunedMs = now;
      for (const [k, e] of memo.entries) if (now - e.usedMs > MEMO_TTL_MS) memo.entries.delete(k);
    }
    return { [list.field]: items };
  }

  return {
    encode(name, value) {
      const t = type(name);
      const err = t.verify(value);
      // verify() rejects enum names given as strings; fromObject converts them, so only trust it for shape.
      if (err && !/enum value expected/.test(err)) throw new TypeError(`CRI ${name}: ${err}`);
      return t.encode(t.fromObject(value)).finish();
    },
    decode<T>(name: string, bytes: Uint8Array) {
      const list = MEMOIZED_LISTS[name];
      return ((list && decodeRepeated(name, list, bytes)) ?? decodeWhole<T>(name, bytes)) as T;
    },
  };
}
