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

/**
 * A key for one encoded entry that is the same for the same content whatever the order of the
 * entries of its map fields: the other fields hashed in order, the map entries' hashes summed.
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
  let ordered = 0n;
  let mapSum = 0n;
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
    const piece = bytes.subarray(start, i);
    if (wire === 2 && maps.includes(Math.floor(tag / 8))) {
      mapSum = (mapSum + (Bun.hash.wyhash(piece) as bigint)) & 0xffffffffffffffffn;
      mapCount++;
    } else ordered = Bun.hash.wyhash(piece, ordered) as bigint;
  }
  return `${ordered.toString(36)}.${mapSum.toString(36)}.${mapCount}.${bytes.length}`;
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

export function createCodec(protoText: string = readFileSync(apiProtoPath, "utf8"), opts: { nowMs?: () => number } = {}): Codec {
  const nowMs = opts.nowMs ?? (() => performance.now());
  const root = protobuf.parse(protoText).root;
  const types = new Map<string, protobuf.Type>();
  const memos = new Map<string, Memo>();
  const type = (name: string): protobuf.Type => {
    let t = types.get(name);
    if (!t) {
      t = root.lookupType(`runtime.v1.${name}`);
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
