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
});
