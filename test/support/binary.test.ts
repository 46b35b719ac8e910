// The whole-binary helpers' port picker: servers started side by side get distinct ports.
import { expect, test } from "bun:test";
import { freePort } from "./binary.ts";

test("freePort never hands out a port twice (the kernel alone repeats about 1 pair in 5,000)", () => {
  const ports = Array.from({ length: 3000 }, () => freePort());
  expect(new Set(ports).size).toBe(ports.length);
  for (const p of ports) expect(p).toBeGreaterThan(0);
});
