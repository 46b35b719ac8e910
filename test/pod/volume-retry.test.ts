import { describe, expect, test } from "bun:test";
import { volumeRetryDelayMs } from "../../src/pod/kuberuntime/pod-volumes.ts";

describe("volume set-up retry delay (upstream's volume operation back-off)", () => {
  test("500 ms after the first failure, doubling, at most 2 min 2 s", () => {
    expect([1, 2, 3, 4].map(volumeRetryDelayMs)).toEqual([500, 1000, 2000, 4000]);
    expect(volumeRetryDelayMs(9)).toBe(122_000);
    expect(volumeRetryDelayMs(40)).toBe(122_000);
  });
});
