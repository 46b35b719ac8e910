// Protobuf codec for the CRI messages: the embedded api.proto parsed by protobufjs at client creation.
// The .proto is imported as a file so `bun build --compile` embeds it (the path becomes a $bunfs path).
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

export function createCodec(protoText: string = readFileSync(apiProtoPath, "utf8")): Codec {
  const root = protobuf.parse(protoText).root;
  const types = new Map<string, protobuf.Type>();
  const type = (name: string): protobuf.Type => {
    let t = types.get(name);
    if (!t) {
      t = root.lookupType(`runtime.v1.${name}`);
      types.set(name, t);
    }
    return t;
  };
  return {
    encode(name, value) {
      const t = type(name);
      const err = t.verify(value);
      // verify() rejects enum names given as strings; fromObject converts them, so only trust it for shape.
      if (err && !/enum value expected/.test(err)) throw new TypeError(`CRI ${name}: ${err}`);
      return t.encode(t.fromObject(value)).finish();
    },
    decode<T>(name: string, bytes: Uint8Array) {
      const t = type(name);
      return t.toObject(t.decode(bytes), DECODE_OPTIONS) as T;
    },
  };
}
