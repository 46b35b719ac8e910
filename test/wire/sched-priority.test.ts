import { describe, expect, test } from "bun:test";
import { applySchedulingNice, type NiceIo } from "../../src/wire/sched-priority.ts";

const fakeIo = (start = 0, fail?: string): NiceIo & { value: number; sets: number } => {
  const io = {
    value: start,
    sets: 0,
    get: () => io.value,
    set(n: number) {
      if (fail) throw Object.assign(new Error(`setpriority: ${fail}`), { code: fail });
      io.sets++;
      io.value = n;
    },
  };
  return io;
};

describe("applySchedulingNice", () => {
  test("sets and reads back", () => {
    const io = fakeIo();
    expect(applySchedulingNice(-10, io)).toEqual({ requested: -10, applied: true, effective: -10 });
    expect(io.sets).toBe(1);
  });
  test("0 leaves the priority as it is", () => {
    const io = fakeIo(3);
    expect(applySchedulingNice(0, io)).toEqual({ requested: 0, applied: false, effective: 3 });
    expect(io.sets).toBe(0);
  });
  test.each([-21, 20, 1.5, Number.NaN])("out of range %p is refused without a call", (n) => {
    const io = fakeIo();
    const r = applySchedulingNice(n, io);
    expect(r.applied).toBe(false);
    expect(r.error).toContain("outside [-20, 19]");
    expect(io.sets).toBe(0);
  });
  test("EACCES (no CAP_SYS_NICE) is reported, not thrown", () => {
    expect(applySchedulingNice(-5, fakeIo(0, "EACCES"))).toEqual({ requested: -5, applied: false, effective: 0, error: "EACCES" });
  });
});
