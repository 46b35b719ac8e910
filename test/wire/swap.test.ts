import { describe, expect, test } from "bun:test";
import { checkSwap, swapCheck, swapLines } from "../../src/wire/swap.ts";

const HEADER = "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n";
const ON = `${HEADER}/dev/nvme0n1p3                          partition\t2097472\t\t0\t\t-2\n`;

describe("swapCheck", () => {
  test.each([
    ["header only, swap off", HEADER, true, false],
    ["empty file", "", true, false],
    ["swap on, failSwapOn", ON, true, true],
    ["swap on, failSwapOn false", ON, false, false],
    ["swap off, failSwapOn false", HEADER, false, false],
    ["two devices", `${ON}/swapfile file 1024 0 -3\n`, true, true],
  ] as const)("%s", (_name, text, failSwapOn, fails) => {
    expect(swapCheck(text, failSwapOn) !== undefined).toBe(fails);
  });

  test("upstream's text, with the /proc/swaps content", () => {
    const msg = swapCheck(ON, true)!;
    expect(msg.startsWith("running with swap on is not supported, please disable swap or set --fail-swap-on flag to false")).toBe(true);
    expect(msg).toContain("/proc/swaps contained: [Filename");
    expect(msg).toContain("/dev/nvme0n1p3");
  });

  test("swapLines keeps the header and the devices", () => {
    expect(swapLines(ON)).toHaveLength(2);
    expect(swapLines(HEADER)).toBeUndefined();
  });
});

describe("checkSwap", () => {
  test("reads /proc/swaps", () => {
    const paths: string[] = [];
    expect(checkSwap(true, (p) => (paths.push(p), ON))).toContain("running with swap on");
    expect(paths).toEqual(["/proc/swaps"]);
  });
  test("no /proc/swaps (kernel without swap): off", () => {
    const enoent = Object.assign(new Error("ENOENT: no such file"), { code: "ENOENT" });
    expect(
      checkSwap(true, () => {
        throw enoent;
      }),
    ).toBeUndefined();
  });
  test("an unreadable /proc/swaps is an error", () => {
    expect(
      checkSwap(true, () => {
        throw Object.assign(new Error("EACCES"), { code: "EACCES" });
      }),
    ).toContain("failed to determine if swap is on");
  });
  test("this machine's /proc/swaps parses", () => {
    expect(() => checkSwap(false)).not.toThrow();
  });
});

describe("runAgent with swap on", () => {
  test("exits 1 with upstream's error before starting anything", async () => {
    const { runAgent } = await import("../../src/cli/run.ts");
    const errors: string[] = [];
    const code = await runAgent([], { printError: (l) => errors.push(l), readProcSwaps: () => ON });
    expect(code).toBe(1);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toStartWith("error: running with swap on is not supported, please disable swap or set --fail-swap-on flag to false");
  });
});
