import { describe, expect, test } from "bun:test";
import { createManualClock } from "../../src/manual-clock.ts";
import { IDLE_COLLECTION_INTERVAL_MS, idleCollectionComponent } from "../../src/wire/idle-collection.ts";

describe("idleCollectionComponent", () => {
  test("collects once per interval from start until stop", async () => {
    const clock = createManualClock();
    let collections = 0;
    const c = idleCollectionComponent({ clock, collect: () => collections++ });
    clock.advance(IDLE_COLLECTION_INTERVAL_MS * 2);
    expect(collections).toBe(0); // nothing before start()
    await c.start();
    clock.advance(IDLE_COLLECTION_INTERVAL_MS - 1);
    expect(collections).toBe(0);
    clock.advance(1);
    expect(collections).toBe(1);
    clock.advance(IDLE_COLLECTION_INTERVAL_MS * 3);
    expect(collections).toBe(4);
    await c.stop();
    clock.advance(IDLE_COLLECTION_INTERVAL_MS * 3);
    expect(collections).toBe(4);
  });
});
