import { describe, expect, test } from "bun:test";
import { createImagePuller, imagePullLimit } from "../../../src/pod/images/puller.ts";

describe("imagePullLimit", () => {
  test.each([
    [true, undefined, 1],
    [true, 1, 1],
    [false, undefined, Number.POSITIVE_INFINITY],
    [false, 3, 3],
    [false, 1, 1],
  ] as const)("serializeImagePulls=%p maxParallelImagePulls=%p → %p", (serialize, max, want) => {
    expect(imagePullLimit(serialize, max)).toBe(want);
  });
});

/** A pull that finishes when the test says so. */
function gate() {
  let open!: (v: string) => void;
  const done = new Promise<string>((r) => (open = r));
  return { done, open };
}

describe("createImagePuller", () => {
  test("serial: one pull at a time, in the order asked", async () => {
    const puller = createImagePuller(1);
    const started: string[] = [];
    const gates = ["a", "b", "c"].map(() => gate());
    const results = ["a", "b", "c"].map((name, i) =>
      puller.pull(() => {
        started.push(name);
        return gates[i]!.done;
      }, Date.now),
    );
    await Bun.sleep(0);
    expect(started).toEqual(["a"]);
    expect(puller.inFlight()).toEqual({ running: 1, waiting: 2 });
    gates[0]!.open("A");
    expect((await results[0]!).value).toBe("A");
    await Bun.sleep(0);
    expect(started).toEqual(["a", "b"]);
    gates[1]!.open("B");
    gates[2]!.open("C");
    expect((await Promise.all(results)).map((r) => r.value)).toEqual(["A", "B", "C"]);
    expect(puller.inFlight()).toEqual({ running: 0, waiting: 0 });
  });

  test("parallel limited: at most the limit at once; a failure frees its slot", async () => {
    const puller = createImagePuller(2);
    const gates = [0, 1, 2].map(() => gate());
    let running = 0;
    let most = 0;
    const results = gates.map((g, i) =>
      puller.pull(async () => {
        running++;
        most = Math.max(most, running);
        try {
          if (i === 0) throw new Error("registry unreachable");
          return await g.done;
        } finally {
          running--;
        }
      }, Date.now),
    );
    await expect(results[0]!).rejects.toThrow("registry unreachable");
    await Bun.sleep(0);
    expect(puller.inFlight()).toEqual({ running: 2, waiting: 0 });
    gates[1]!.open("1");
    gates[2]!.open("2");
    expect((await Promise.all(results.slice(1))).map((r) => r.value)).toEqual(["1", "2"]);
    expect(most).toBe(2);
  });

  test("unbounded: all at once", async () => {
    const puller = createImagePuller(Number.POSITIVE_INFINITY);
    const gates = [0, 1, 2, 3].map(() => gate());
    const results = gates.map((g) => puller.pull(() => g.done, Date.now));
    expect(puller.inFlight()).toEqual({ running: 4, waiting: 0 });
    for (const g of gates) g.open("x");
    await Promise.all(results);
  });

  test("timing: the wait for a slot and the pull itself, apart", async () => {
    let t = 1000;
    const now = () => t;
    const puller = createImagePuller(1);
    const first = gate();
    const a = puller.pull(() => first.done, now);
    const b = puller.pull(async () => {
      t += 200;
      return "b";
    }, now);
    t += 500;
    first.open("a");
    expect((await a).timing).toEqual({ waitedMs: 0, pulledMs: 500 });
    expect((await b).timing).toEqual({ waitedMs: 500, pulledMs: 200 });
  });
});
