import { describe, expect, test } from "bun:test";
import { createSlots } from "../../../src/pod/kuberuntime/slots.ts";

describe("slots", () => {
  test("at most `limit` calls overlap; the rest run in arrival order; failures free their slot", async () => {
    const slots = createSlots(2);
    let inFlight = 0;
    let most = 0;
    const order: number[] = [];
    const gates = Array.from({ length: 5 }, () => Promise.withResolvers<void>());
    const calls = gates.map((g, i) =>
      slots.run(async () => {
        inFlight++;
        most = Math.max(most, inFlight);
        order.push(i);
        await g.promise;
        inFlight--;
        if (i === 1) throw new Error("boom");
        return i;
      }),
    );
    const settled = Promise.allSettled(calls);
    for (const g of gates) {
      g.resolve();
      await Bun.sleep(0);
    }
    const results = await settled;
    expect(most).toBe(2);
    expect(order).toEqual([0, 1, 2, 3, 4]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled", "fulfilled", "fulfilled"]);
  });

  test("a waiter of higher priority goes before earlier waiters of lower priority; arrival order within a priority", async () => {
    const slots = createSlots(1);
    const order: string[] = [];
    const first = Promise.withResolvers<void>();
    const running = slots.run(async () => {
      order.push("running");
      await first.promise;
    });
    const waiters = [
      slots.run(async () => void order.push("sandbox a"), 0),
      slots.run(async () => void order.push("create a"), 1),
      slots.run(async () => void order.push("sandbox b"), 0),
      slots.run(async () => void order.push("start a"), 2),
      slots.run(async () => void order.push("create b"), 1),
    ];
    first.resolve();
    await Promise.all([running, ...waiters]);
    expect(order).toEqual(["running", "start a", "create a", "create b", "sandbox a", "sandbox b"]);
  });
});

describe("slots acquire", () => {
  test("a held slot is released once, however often its release is called", async () => {
    const slots = createSlots(1);
    const release = await slots.acquire();
    let ran = false;
    const waiter = slots.run(async () => void (ran = true));
    await Bun.sleep(0);
    expect(ran).toBe(false);
    release();
    release();
    await waiter;
    expect(ran).toBe(true);
    // Still one slot: a second holder waits for the first.
    const a = await slots.acquire();
    let got = false;
    const b = slots.acquire().then((r) => ((got = true), r));
    await Bun.sleep(0);
    expect(got).toBe(false);
    a();
    (await b)();
  });
});
