// signalPending against the real kernel's /proc/<pid>/status: a stopped process with a SIGTERM handler
// (as memhog's) keeps the signal pending (ShdPnd) until it is continued, then takes it. (Without a
// handler the kernel kills the process at once, stopped or not.)
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { awaitSignalsTaken, signalPending } from "../../../src/kernel/signals-taken.ts";

const status = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/status`, "latin1");
  } catch {
    return undefined;
  }
};

test("a SIGTERM sent to a stopped process shows pending until SIGCONT; awaitSignalsTaken then returns", async () => {
  const p = Bun.spawn(["sh", "-c", "trap 'exit 7' TERM; echo ready; while :; do sleep 0.05; done"], { stdout: "pipe" });
  await p.stdout.getReader().read(); // the trap is set
  try {
    expect(signalPending(status(p.pid)!, 15)).toBe(false);
    process.kill(p.pid, "SIGSTOP");
    // Stopped first: sent together, SIGTERM (15) would be dequeued before SIGSTOP (19).
    while (!/^State:\s+T/m.test(status(p.pid) ?? "")) await Bun.sleep(1);
    process.kill(p.pid, "SIGTERM");
    expect(signalPending(status(p.pid)!, 15)).toBe(true);
    const io = { procStatus: status, sleep: (ms: number) => Bun.sleepSync(ms), now: () => performance.now() };
    // Still stopped: not taken within the cap.
    expect(awaitSignalsTaken([{ pid: p.pid, signal: 15 }], io, { minMs: 2, capMs: 20, firstMs: 1 })).toBeUndefined();
    process.kill(p.pid, "SIGCONT");
    expect(awaitSignalsTaken([{ pid: p.pid, signal: 15 }], io, { minMs: 2, capMs: 5_000, firstMs: 1 })).toBeNumber();
    expect(await p.exited).toBe(7);
  } finally {
    p.kill("SIGKILL");
  }
});
