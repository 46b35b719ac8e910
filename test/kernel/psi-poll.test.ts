import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { hasCapSysResource, startPsiPolling, type PsiEvent, type PsiNotifier } from "../../src/kernel/psi.ts";
import { pollUntil } from "../support/wait.ts";

const pressure = (someTotal: number) => `some avg10=0.00 avg60=0.00 avg300=0.00 total=${someTotal}\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n`;

/** Polls every 2 ms, 3 s at most. */
const until = (cond: () => boolean, what: string, timeoutMs = 3000) => pollUntil(cond, what, timeoutMs, 2);

describe("PSI polling fallback", () => {
  let n: PsiNotifier | undefined;
  let dir: string | undefined;
  afterEach(() => {
    n?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test("fires when total stall grows by ≥ stall within the window, once per window", async () => {
    dir = mkdtempSync(join(tmpdir(), `bunlet-psi-${process.pid}-`));
    const path = join(dir, "memory.pressure");
    writeFileSync(path, pressure(1000));
    const seen: PsiEvent[] = [];
    n = startPsiPolling({ path, trigger: "some 150000 10000000", pollIntervalMs: 5, onEvent: (e) => seen.push(e) });
    expect(n.mode).toBe("poll");
    writeFileSync(path, pressure(100_000)); // +99 ms of stall: below the trigger
    writeFileSync(path, pressure(200_000)); // +199 ms: fires
    await until(() => seen.length === 1, "poll event");
    expect(seen[0]!.source).toBe("poll");
    expect(seen[0]!.pressure?.some.total).toBe(200_000);
    writeFileSync(path, pressure(900_000)); // same 10 s window: rate-limited
    await Bun.sleep(30);
    expect(seen.length).toBe(1);
  });

  test("reports removal of the file", async () => {
    dir = mkdtempSync(join(tmpdir(), `bunlet-psi-${process.pid}-`));
    const path = join(dir, "memory.pressure");
    writeFileSync(path, pressure(0));
    let removed: string | undefined;
    n = startPsiPolling({ path, trigger: "some 150000 1000000", pollIntervalMs: 5, onEvent() {}, onRemoved: (p) => (removed = p) });
    rmSync(path);
    await until(() => removed === path, "removal");
    expect(n.stopped).toBe(true);
  });
});

describe("hasCapSysResource", () => {
  test.each([
    ["CapEff:\t000001ffffffffff\n", true],
    ["CapEff:\t000001fffeffffff\n", false],
    ["Name: x\n", false],
  ])("%j → %p", (status, want) => {
    expect(hasCapSysResource(status)).toBe(want);
  });
});
