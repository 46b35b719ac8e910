// The entries of a tar file (POSIX ustar, with PAX extended headers and GNU long names, as `docker
// save`, umoci and Go's archive/tar write them), found by reading the headers only: each entry's
// data stays in the file and is read later by offset, so an image tarball of gigabytes is indexed
// with a few reads of 512 bytes. The header parsing is pure; the walk reads through an injected reader.

/** One file (or link) in the tar: where its data is and how long. */
export interface TarEntry {
  name: string;
  /** "0" file, "1" hard link, "2" symlink, "5" directory… (the typeflag). */
  type: string;
  /** Offset of the data in the tar file, and its size in bytes. */
  offset: number;
  size: number;
  linkName: string;
}

export interface TarHeader {
  name: string;
  type: string;
  size: number;
  linkName: string;
}

const BLOCK = 512;
const text = new TextDecoder();

function field(block: Uint8Array, start: number, length: number): string {
  const raw = block.subarray(start, start + length);
  const nul = raw.indexOf(0);
  return text.decode(nul < 0 ? raw : raw.subarray(0, nul));
}

/** An octal number field; base-256 (GNU, first byte 0x80) for sizes past 8 GiB. */
function numeric(block: Uint8Array, start: number, length: number): number {
  if ((block[start]! & 0x80) !== 0) {
    let v = block[start]! & 0x7f;
    for (let i = start + 1; i < start + length; i++) v = v * 256 + block[i]!;
    return v;
  }
  const s = field(block, start, length).trim();
  return s === "" ? 0 : Number.parseInt(s, 8);
}

/**
 * Pure: one 512-byte header block. null for an all-zero block (the archive's end); throws when the
 * checksum does not match (not a tar file, or a corrupt one).
 */
export function parseTarHeader(block: Uint8Array): TarHeader | null {
  if (block.length < BLOCK) throw new Error(`tar: short header of ${block.length} bytes`);
  if (block.every((b) => b === 0)) return null;
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 32 : block[i]!;
  if (sum !== numeric(block, 148, 8)) throw new Error("tar: header checksum does not match: not a tar file, or a corrupt one");
  let name = field(block, 0, 100);
  // ustar: a prefix of the path at 345.
  if (field(block, 257, 5) === "ustar") {
    const prefix = field(block, 345, 155);
    if (prefix) name = `${prefix}/${name}`;
  }
  const type = field(block, 156, 1) || "0";
  return { name, type, size: numeric(block, 124, 12), linkName: field(block, 157, 100) };
}

/** Pure: the records of a PAX extended header ("<len> <key>=<value>\n" each). */
export function parsePaxRecords(data: Uint8Array): Record<string, string> {
  const out: Record<string, string> = {};
  let o = 0;
  while (o < data.length) {
    const space = data.indexOf(0x20, o);
    if (space < 0) break;
    const len = Number.parseInt(text.decode(data.subarray(o, space)), 10);
    if (!(len > 0) || o + len > data.length) throw new Error("tar: malformed PAX record");
    const record = text.decode(data.subarray(space + 1, o + len - 1));
    const eq = record.indexOf("=");
    if (eq > 0) out[record.slice(0, eq)] = record.slice(eq + 1);
    o += len;
  }
  return out;
}

/** Pure: a member path as the archive's own paths name it ("./index.json" → "index.json"). */
export function cleanTarPath(p: string): string {
  const parts: string[] = [];
  for (const s of p.split("/")) {
    if (s === "" || s === ".") continue;
    if (s === "..") parts.pop();
    else parts.push(s);
  }
  return parts.join("/");
}

const padded = (n: number) => Math.ceil(n / BLOCK) * BLOCK;
/** Metadata entries bigger than this are refused (a PAX header or long name is a few hundred bytes). */
const MAX_META_BYTES = 1024 * 1024;

/** Reads `length` bytes at `offset`. */
export type ReadAt = (offset: number, length: number) => Promise<Uint8Array>;

/**
 * Every entry of the tar file of `fileSize` bytes, by cleaned path (a later entry of the same path
 * wins, as tar -x). A file without the end-of-archive block is refused: it is still being written.
 */
export async function indexTar(read: ReadAt, fileSize: number): Promise<Map<string, TarEntry>> {
  const entries = new Map<string, TarEntry>();
  let ended = false;
  let pax: Record<string, string> = {};
  let longName: string | undefined;
  let longLink: string | undefined;
  for (let o = 0; o + BLOCK <= fileSize; ) {
    const h = parseTarHeader(await read(o, BLOCK));
    if (!h) {
      ended = true;
      break;
    }
    const dataOffset = o + BLOCK;
    const size = pax.size !== undefined ? Number(pax.size) : h.size;
    if (dataOffset + size > fileSize) throw new Error(`tar: entry ${JSON.stringify(h.name)} runs past the end of the file`);
    o = dataOffset + padded(size);
    if (h.type === "x" || h.type === "L" || h.type === "K") {
      if (size > MAX_META_BYTES) throw new Error(`tar: metadata entry of ${size} bytes`);
      const data = await read(dataOffset, size);
      if (h.type === "x") pax = parsePaxRecords(data);
      else if (h.type === "L") longName = field(data, 0, data.length);
      else longLink = field(data, 0, data.length);
      continue;
    }
    if (h.type === "g") continue; // global PAX header: nothing bunlet reads
    const name = cleanTarPath(pax.path ?? longName ?? h.name);
    const linkName = pax.linkpath ?? longLink ?? h.linkName;
    pax = {};
    longName = undefined;
    longLink = undefined;
    if (name) entries.set(name, { name, type: h.type, offset: dataOffset, size, linkName });
  }
  if (!ended) throw new Error(`tar: no end-of-archive block in ${fileSize} bytes (a file still being written, or cut short)`);
  return entries;
}

/** The regular file at `path`, following symlinks and hard links inside the archive (at most 16). */
export function resolveTarFile(entries: ReadonlyMap<string, TarEntry>, path: string): TarEntry | undefined {
  let p = cleanTarPath(path);
  for (let hops = 0; hops < 16; hops++) {
    const e = entries.get(p);
    if (!e) return undefined;
    if (e.type === "0" || e.type === "7") return e;
    if (e.type === "1") p = cleanTarPath(e.linkName);
    else if (e.type === "2") p = cleanTarPath(e.linkName.startsWith("/") ? e.linkName : `${p.split("/").slice(0, -1).join("/")}/${e.linkName}`);
    else return undefined;
  }
  return undefined;
}
