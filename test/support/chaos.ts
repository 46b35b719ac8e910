// The chaos scenarios' test setup: one private containerd for a describe block (the scenarios' own
// acquire/release then never restart it), and afterAll's cleanup of a scenario a timeout left running.
import { afterAll, beforeAll } from "bun:test";
import { cleanupActive } from "../../scripts/chaos/lib.ts";
import { ensureBuilt } from "./binary.ts";
import { acquireContainerd, type TestContainerd } from "./containerd.ts";

/** Registers the describe block's beforeAll/afterAll; `build`: dist/bunlet is built first (default). */
export function useChaosContainerd(opts: { build?: boolean } = {}): void {
  let ctd: TestContainerd | undefined;
  beforeAll(async () => {
    if (opts.build ?? true) await ensureBuilt();
    ctd = await acquireContainerd();
  }, 300_000);
  afterAll(async () => {
    await cleanupActive();
    await ctd?.release();
  }, 60_000);
}
