import { describe, expect, test } from "bun:test";
import { GUEST_RESULT_PREFIX, type GuestResult, guestErrors, guestRows, parseGuestOutput } from "../../scripts/bench/lib/guest-table.ts";

const idle = (cpuPct: number, rssMb: number) => ({ cpuPct, rssMb, pssMb: rssMb, wakeupsPerS: 5, threads: 10 });
const result: GuestResult = {
  pods: 40,
  kubelet: { idle0: idle(2, 80), idle100: idle(8, 120), burst: { firstMs: 3000, allMs: 60_000 }, podStartMs: [], errors: [] },
  bunlet: {
    idle0: idle(0.5, 90),
    idle100: idle(2, 130),
    burst: { firstMs: 1000, allMs: 30_000 },
    podStartMs: [],
    errors: ["bunlet, figure 5, run 2: timed out"],
  },
  floor: { 4: { firstMs: 500, allMs: 25_000 } },
  floorErrors: [],
  skipped: [{ figure: "5. memory ramp, kubelet", reason: "its error" }],
  context: { kernel: "6.1.0" },
};

describe("parseGuestOutput", () => {
  test("finds the result line among the guest's other output (the last one wins)", () => {
    const out = `progress\n${GUEST_RESULT_PREFIX}{"pods":1}\nmore\n${GUEST_RESULT_PREFIX}${JSON.stringify(result)}\n`;
    expect(parseGuestOutput(out)).toEqual(result);
  });

  test.each([
    ["no result line", "v2-guest: timeout after 60s\n", /no "vs-kubelet-guest result:" line/],
    ["a result without the agents", `${GUEST_RESULT_PREFIX}{"pods":3,"floor":{},"skipped":[]}`, /has no kubelet, bunlet/],
    ["malformed JSON", `${GUEST_RESULT_PREFIX}{"pods":`, /JSON|Unexpected|parse/i],
  ])("%s is an error naming it", (_what, out, message) => {
    expect(() => parseGuestOutput(out)).toThrow(message);
  });

  test("a result without floor errors or context gets empty ones", () => {
    const { floorErrors: _f, context: _c, ...bare } = result;
    expect(parseGuestOutput(`${GUEST_RESULT_PREFIX}${JSON.stringify(bare)}`)).toMatchObject({ floorErrors: [], context: {} });
  });
});

describe("guestRows", () => {
  const rows = Object.fromEntries(guestRows(result).map((r) => [r.figure, r]));

  test("the host figures' rows, labelled as the guest's, with the guest's pod count", () => {
    expect(rows["7. v2 guest: 1. idle, 40 pods: CPU"]).toMatchObject({ kubelet: 8, bunlet: 2, ratio: 0.25, met: true });
    expect(rows["7. v2 guest: 2. 40 manifests at once: all running"]).toMatchObject({ kubelet: 60, bunlet: 30, ratio: 0.5 });
    expect(rows["7. v2 guest: 2. all running ÷ best bare-CRI floor"]).toMatchObject({ kubelet: 60 / 25, bunlet: 30 / 25 });
    expect(Object.keys(rows).every((f) => f.startsWith("7. v2 guest: "))).toBe(true);
  });

  test("figures not measured have no row; a skipped one has a row with its reason and no values", () => {
    expect(Object.keys(rows).some((f) => f.includes("restart") || f.includes("one static pod"))).toBe(false);
    const skipped = rows["7. v2 guest: 5. memory ramp, kubelet: skipped (its error)"];
    expect(skipped).toMatchObject({ goal: "—" });
    expect([skipped?.kubelet, skipped?.bunlet, skipped?.met]).toEqual([undefined, undefined, undefined]);
  });

  test("errors say they are the guest's", () => {
    expect(guestErrors(result)).toEqual(["v2 guest: bunlet, figure 5, run 2: timed out"]);
  });
});
