import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { parseProcStat } from "../../src/kernel/proc-stat.ts";

// Fields 3.. of a stat line: state, ppid, pgrp, session, tty_nr, tpgid, flags, minflt, cminflt, majflt (12), cmajflt, utime (14)…
const tail = (majflt: number) => `S 1 2 3 4 5 6 700 8 ${majflt} 10 150 50 0 0 20 0 1 0 12345 4096000 300`;

describe("parseProcStat majorFaults (field 12)", () => {
  test.each([
    ["a plain comm", `42 (bun) ${tail(9)}\n`, 9],
    ["a comm with spaces and parens", `42 (we ird) name) ${tail(31)}\n`, 31],
    ["a thread's line (/proc/thread-self/stat)", `4242 (Worker) ${tail(0)}`, 0],
  ])("%s", (_n, text, want) => {
    expect(parseProcStat(text).majorFaults).toBe(want);
  });

  test("this process's, as the working-set thread reads it", () => {
    const text = readFileSync("/proc/self/stat", "latin1");
    // The hand parse the thread used before: the 10th field after the comm.
    expect(parseProcStat(text).majorFaults).toBe(Number(text.slice(text.lastIndexOf(")") + 2).split(" ")[9]));
  });
});
