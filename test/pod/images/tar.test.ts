import { describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cleanTarPath, indexTar, parsePaxRecords, parseTarHeader, resolveTarFile } from "../../../src/pod/images/tar.ts";
import { makeTar, readerOf } from "./tar-fixture.ts";

const dec = new TextDecoder();
const index = (bytes: Uint8Array) => indexTar(readerOf(bytes), bytes.length);

describe("parseTarHeader", () => {
  test("an all-zero block ends the archive", () => {
    expect(parseTarHeader(new Uint8Array(512))).toBeNull();
  });
  test("a block that is not a tar header is refused by its checksum", () => {
    const b = new Uint8Array(512).fill(65);
    expect(() => parseTarHeader(b)).toThrow("not a tar file");
  });
  test("name, size and type of a ustar header", () => {
    const tar = makeTar([{ name: "blobs/sha256/abc", data: "hello" }]);
    expect(parseTarHeader(tar.subarray(0, 512))).toEqual({ name: "blobs/sha256/abc", type: "0", size: 5, linkName: "" });
  });
});

describe("parsePaxRecords", () => {
  test.each([
    ["16 path=abcdefg\n", { path: "abcdefg" }],
    ["12 size=100\n18 path=a/b/c/d/e\n", { size: "100", path: "a/b/c/d/e" }],
    ["", {}],
  ])("%j", (text, want) => {
    expect(parsePaxRecords(new TextEncoder().encode(text))).toEqual(want);
  });
  test("a record longer than the data is refused", () => {
    expect(() => parsePaxRecords(new TextEncoder().encode("99 path=x\n"))).toThrow("malformed PAX record");
  });
});

describe("cleanTarPath", () => {
  test.each([
    ["./index.json", "index.json"],
    ["blobs//sha256/x", "blobs/sha256/x"],
    ["a/../b/./c", "b/c"],
    ["/abs/x", "abs/x"],
  ])("%s → %s", (p, want) => expect(cleanTarPath(p)).toBe(want));
});

describe("indexTar", () => {
  test("entries by cleaned path, with the offset and size of their data", async () => {
    const tar = makeTar([
      { name: "./oci-layout", data: '{"imageLayoutVersion":"1.0.0"}' },
      { name: "./blobs/", type: "5" },
      { name: "./blobs/sha256/aa", data: "x".repeat(700) },
      { name: `long/${"n".repeat(120)}`, data: "pax named", pax: true },
    ]);
    const entries = await index(tar);
    expect([...entries.keys()]).toEqual(["oci-layout", "blobs", "blobs/sha256/aa", `long/${"n".repeat(120)}`]);
    const e = entries.get("blobs/sha256/aa")!;
    expect(e.size).toBe(700);
    expect(dec.decode(tar.subarray(e.offset, e.offset + e.size))).toBe("x".repeat(700));
    const p = entries.get(`long/${"n".repeat(120)}`)!;
    expect(dec.decode(tar.subarray(p.offset, p.offset + p.size))).toBe("pax named");
  });

  test("a tar without its end-of-archive block (still being copied) is refused", async () => {
    await expect(index(makeTar([{ name: "a", data: "1" }], { end: false }))).rejects.toThrow("no end-of-archive block");
  });

  test("a tar cut inside an entry's data is refused", async () => {
    const tar = makeTar([{ name: "a", data: "x".repeat(2000) }]);
    await expect(index(tar.subarray(0, 1024))).rejects.toThrow("runs past the end");
  });

  test("GNU tar's long names and symlinks (docker save's shared layers), read as written by tar(1)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "bunlet-tar-"));
    try {
      const long = `${"d".repeat(80)}/${"f".repeat(80)}`;
      mkdirSync(join(dir, "src", "d".repeat(80)), { recursive: true });
      mkdirSync(join(dir, "src", "layer2"));
      writeFileSync(join(dir, "src", long), "layer bytes");
      spawnSync("ln", ["-s", `../${long}`, join(dir, "src", "layer2", "layer.tar")]);
      const r = spawnSync("tar", ["--format=gnu", "-C", join(dir, "src"), "-cf", join(dir, "t.tar"), "."]);
      expect(r.status).toBe(0);
      const tar = new Uint8Array(readFileSync(join(dir, "t.tar")));
      const entries = await index(tar);
      const viaLink = resolveTarFile(entries, "layer2/layer.tar")!;
      expect(viaLink.name).toBe(long);
      expect(dec.decode(tar.subarray(viaLink.offset, viaLink.offset + viaLink.size))).toBe("layer bytes");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("resolveTarFile", () => {
  test("hard links are followed; directories and missing paths are not files; link loops end", async () => {
    const entries = await index(
      makeTar([
        { name: "a", data: "A" },
        { name: "b", type: "1", linkName: "a" },
        { name: "dir", type: "5" },
        { name: "loop1", type: "2", linkName: "loop2" },
        { name: "loop2", type: "2", linkName: "loop1" },
      ]),
    );
    expect(resolveTarFile(entries, "./b")?.name).toBe("a");
    expect(resolveTarFile(entries, "dir")).toBeUndefined();
    expect(resolveTarFile(entries, "nope")).toBeUndefined();
    expect(resolveTarFile(entries, "loop1")).toBeUndefined();
  });
});
