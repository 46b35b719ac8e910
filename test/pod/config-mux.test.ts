import { describe, expect, test } from "bun:test";
import { createPodConfig } from "../../src/pod/sources/config-mux.ts";
import type { PodUpdate } from "../../src/pod/sources/update.ts";
import { ConfigFirstSeenAnnotationKey } from "../../src/pod/static-pod.ts";
import type { Pod } from "../../src/pod/types.ts";
import { createSettlingClock } from "../support/settling-clock.ts";
import { makePod } from "./fake-runtime.ts";

function setup() {
  const clock = createSettlingClock();
  const out: PodUpdate[] = [];
  const mux = createPodConfig({ clock, onUpdate: (u) => out.push(u) });
  const ops = () => out.splice(0).map((u) => `${u.op}:${u.source}:${u.pods.map((p) => p.metadata.name).join(",")}`);
  return { clock, mux, ops };
}

const a = makePod({ name: "a", uid: "ua" });
const b = makePod({ name: "b", uid: "ub" });

describe("config mux", () => {
  test("SET adds, re-SET of the same pods is silent, missing pods are removed", () => {
    const { mux, ops } = setup();
    expect(mux.seenAllSources(["file"])).toBe(false);
    mux.merge("file", { op: "SET", pods: [a, b] });
    expect(ops()).toEqual(["ADD:file:a,b"]);
    expect(mux.seenAllSources(["file"])).toBe(true);
    mux.merge("file", { op: "SET", pods: [a, b] });
    expect(ops()).toEqual([]);
    mux.merge("file", { op: "SET", pods: [b] });
    expect(ops()).toEqual(["REMOVE:file:a"]);
  });

  test("changed spec is an UPDATE keeping config.seen; status-only change is a RECONCILE", async () => {
    const { mux, ops, clock } = setup();
    mux.merge("file", { op: "SET", pods: [a] });
    const seen = mux.pods()[0]!.metadata.annotations?.[ConfigFirstSeenAnnotationKey];
    expect(seen).toBeDefined();
    ops();
    await clock.advance(5000);
    const a2: Pod = structuredClone(a);
    a2.spec.containers[0]!.image = "other";
    mux.merge("file", { op: "SET", pods: [a2] });
    expect(ops()).toEqual(["UPDATE:file:a"]);
    expect(mux.pods()[0]!.metadata.annotations?.[ConfigFirstSeenAnnotationKey]).toBe(seen!);
    const a3: Pod = structuredClone(a2);
    a3.status = { phase: "Running" };
    mux.merge("file", { op: "UPDATE", pods: [a3] });
    expect(ops()).toEqual(["RECONCILE:file:a"]);
  });

  test("a SET of the very objects of the last SET keeps the pods as they were (no clone); an UPDATE in between ends that", () => {
    const { mux, ops } = setup();
    mux.merge("file", { op: "SET", pods: [a] });
    const first = mux.pods()[0];
    ops();
    mux.merge("file", { op: "SET", pods: [a] });
    expect(ops()).toEqual([]);
    expect(mux.pods()[0]).toBe(first!);
    const a2: Pod = structuredClone(a);
    a2.spec.containers[0]!.image = "other";
    mux.merge("file", { op: "UPDATE", pods: [a2] });
    expect(ops()).toEqual(["UPDATE:file:a"]);
    // The same object as two SETs ago is a change back now.
    mux.merge("file", { op: "SET", pods: [a] });
    expect(ops()).toEqual(["UPDATE:file:a"]);
    expect(mux.pods()[0]!.spec.containers[0]!.image).toBe(a.spec.containers[0]!.image);
  });

  test("sources are independent; ADD/REMOVE are incremental; order is REMOVE then ADD", () => {
    const { mux, ops } = setup();
    mux.merge("file", { op: "SET", pods: [a] });
    mux.merge("http", { op: "ADD", pods: [b] });
    expect(ops()).toEqual(["ADD:file:a", "ADD:http:b"]);
    expect(mux.seenAllSources(["file", "http"])).toBe(false); // http never sent a SET
    const c = makePod({ name: "c", uid: "uc" });
    mux.merge("file", { op: "SET", pods: [c] });
    expect(ops()).toEqual(["REMOVE:file:a", "ADD:file:c"]);
    mux.merge("http", { op: "REMOVE", pods: [b] });
    expect(ops()).toEqual(["REMOVE:http:b"]);
    expect(mux.pods().map((p) => p.metadata.name)).toEqual(["c"]);
  });

  test("a duplicate namespace/name within a source is dropped", () => {
    const { mux, ops } = setup();
    const dup = makePod({ name: "a", uid: "other" });
    mux.merge("file", { op: "SET", pods: [a, dup] });
    expect(ops()).toEqual(["ADD:file:a"]);
    expect(mux.pods().map((p) => p.metadata.uid)).toEqual(["ua"]);
  });
});
