import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CheckpointError, createResourceState, parseCheckpoint, serializeCheckpoint } from "../../../src/pod/allocation/state.ts";

const dir = mkdtempSync(join(tmpdir(), "bunlet-alloc-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const pods = new Map([["u1", { containers: { app: { requests: { cpu: "500m" }, limits: { memory: "128Mi" } } } }]]);

describe("checkpoint parse", () => {
  test("round trip", () => expect(parseCheckpoint(serializeCheckpoint(pods), "f")).toEqual(pods));
  test.each([
    ["not JSON", "{", /f: not JSON/],
    [
      "wrong shape",
      JSON.stringify({ version: 1, pods: { u: { containers: { a: { requests: { cpu: 1 } } } } }, checksum: 0 }),
      /f: pods\.u\.containers\.a\.requests\.cpu: /,
    ],
    ["wrong version", JSON.stringify({ version: 2, pods: {}, checksum: 0 }), /f: version: /],
    ["checksum", serializeCheckpoint(pods).replace("500m", "600m"), /f: checksum mismatch/],
  ])("%s → CheckpointError", (_name, text, want) => {
    expect(() => parseCheckpoint(text, "f")).toThrow(CheckpointError);
    expect(() => parseCheckpoint(text, "f")).toThrow(want);
  });
});

describe("createResourceState", () => {
  test("writes through atomically and reads back after a restart", async () => {
    const file = join(dir, "allocated_pods_state");
    const s = createResourceState(file);
    s.setPod("u1", pods.get("u1")!);
    s.setContainer("u2", "c", { limits: { cpu: "1" } });
    await s.flushed();
    const again = createResourceState(file);
    expect(again.getContainer("u1", "app")).toEqual({ requests: { cpu: "500m" }, limits: { memory: "128Mi" } });
    again.removeOrphans(new Set(["u2"]));
    await again.flushed();
    expect(Object.keys(JSON.parse(readFileSync(file, "utf8")).pods)).toEqual(["u2"]);
  });
  test("a corrupt file: starts empty", () => {
    const file = join(dir, "bad");
    writeFileSync(file, "garbage");
    expect(createResourceState(file).get("u1")).toBeUndefined();
  });
});
