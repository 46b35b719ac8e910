import { expect, test } from "bun:test";
import { createManualClock } from "../../src/manual-clock.ts";
import { tokenBucket } from "../../src/kube/rate-limiter.ts";

test.each([
  // qps, burst, requests, advance ms → how many went through
  [5, 2, 4, 0, 2],
  [5, 2, 4, 200, 3],
  [5, 2, 4, 400, 4],
  [50, 100, 120, 0, 100],
  [0, 0, 10, 0, 10], // qps <= 0: unlimited
])("qps=%d burst=%d: %d requests after %d ms → %d admitted", async (qps, burst, n, advanceMs, want) => {
  const clock = createManualClock(1000);
  const rl = tokenBucket(qps, burst, clock);
  let done = 0;
  for (let i = 0; i < n; i++) void rl.wait().then(() => done++);
  await new Promise((r) => setImmediate(r));
  if (advanceMs) {
    for (let t = 0; t < advanceMs; t += 50) {
      clock.advance(50);
      await new Promise((r) => setImmediate(r));
    }
  }
  expect(done).toBe(want);
});
