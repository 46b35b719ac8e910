import { describe, expect, test } from "bun:test";
import { createHpackDecoder, encodeHeaders, HpackError, huffmanDecode } from "../../src/cri/hpack.ts";

const hex = (s: string) => Uint8Array.from((s.match(/../g) ?? []).map((b) => parseInt(b, 16)));
const text = (b: Uint8Array) => new TextDecoder().decode(b);

describe("huffmanDecode", () => {
  // RFC 7541 C.4.1 and C.6.1.
  test.each([
    ["f1e3c2e5f23a6ba0ab90f4ff", "www.example.com"],
    ["6402", "302"],
    ["aec3771a4b", "private"],
    ["d07abe941054d444a8200595040b8166e082a62d1bff", "Mon, 21 Oct 2013 20:13:21 GMT"],
    ["", ""],
  ])("%s → %s", (h, want) => {
    expect(text(huffmanDecode(hex(h)))).toBe(want);
  });
  test.each([
    ["padding longer than 7 bits", "f1e3c2e5f23a6ba0ab90f4ffff"],
    ["padding that is not all ones", "f1e3c2e5f23a6ba0ab90f4fe"],
  ])("%s throws", (_, h) => {
    expect(() => huffmanDecode(hex(h))).toThrow(HpackError);
  });
});

describe("createHpackDecoder", () => {
  test("RFC 7541 C.3: requests without Huffman, sharing the dynamic table", () => {
    const d = createHpackDecoder();
    expect(d.decode(hex("828684410f7777772e6578616d706c652e636f6d"))).toEqual([
      [":method", "GET"],
      [":scheme", "http"],
      [":path", "/"],
      [":authority", "www.example.com"],
    ]);
    expect(d.decode(hex("828684be58086e6f2d6361636865"))).toEqual([
      [":method", "GET"],
      [":scheme", "http"],
      [":path", "/"],
      [":authority", "www.example.com"],
      ["cache-control", "no-cache"],
    ]);
    expect(d.decode(hex("828785bf400a637573746f6d2d6b65790c637573746f6d2d76616c7565"))).toEqual([
      [":method", "GET"],
      [":scheme", "https"],
      [":path", "/index.html"],
      [":authority", "www.example.com"],
      ["custom-key", "custom-value"],
    ]);
  });

  test("gRPC replies as an encoder with Huffman and indexing writes them (vectors from the hpack Python package)", () => {
    const d = createHpackDecoder();
    expect(d.decode(hex("885f8b1d75d0620d263d4c4d6564408a9acac8b16a21e435537f863485a9264faf"))).toEqual([
      [":status", "200"],
      ["content-type", "application/grpc"],
      ["grpc-encoding", "identity"],
    ]);
    expect(d.decode(hex("88bf40889acac8b21234da8f816f40899acac8b5254207317f9721ea48cd516c53f91c64fe54a8e95253db5497140800af"))).toEqual([
      [":status", "200"],
      ["content-type", "application/grpc"],
      ["grpc-status", "5"],
      ["grpc-message", 'container "abc" not found: 100%'],
    ]);
    expect(d.decode(hex("7f0001307f00004007782d627974657305c3a9207e7f"))).toEqual([
      ["grpc-status", "0"],
      ["grpc-message", ""],
      ["x-bytes", "é ~\x7f"],
    ]);
  });

  test("a table size update evicts; an index past the table throws", () => {
    const d = createHpackDecoder();
    d.decode(hex("400a637573746f6d2d6b65790c637573746f6d2d76616c7565")); // custom-key: custom-value, indexed
    expect(d.decode(hex("be"))).toEqual([["custom-key", "custom-value"]]);
    expect(() => d.decode(hex("20be"))).toThrow(/past the table/);
    expect(() => createHpackDecoder().decode(hex("3fe21f"))).toThrow(/above 4096/);
  });

  test("encodeHeaders round-trips through the decoder, long values included", () => {
    const headers: [string, string][] = [
      [":method", "POST"],
      [":path", "/runtime.v1.RuntimeService/ListContainers"],
      ["grpc-timeout", "120000m"],
      ["x-long", "v".repeat(300)],
    ];
    expect(createHpackDecoder().decode(encodeHeaders(headers))).toEqual(headers);
  });
});
