import { describe, expect, test } from "bun:test";
import { reconnectObserver, type RequestAttempt } from "../../src/kube/index.ts";

const attempt = (code: string): RequestAttempt => ({ method: "PUT", host: "127.0.0.1:6443", code, durationSeconds: 0.01 });

describe("reconnectObserver", () => {
  test.each([
    ["answers only: never", ["200", "200"], 0],
    ["an outage then an answer: once", ["<error>", "<error>", "200"], 1],
    ["an error status is an answer: once", ["<error>", "503"], 1],
    ["two outages: twice", ["<error>", "200", "200", "<error>", "409"], 2],
    ["still down: never", ["200", "<error>"], 0],
  ])("%s", (_what, codes, calls) => {
    let n = 0;
    const seen: string[] = [];
    const o = reconnectObserver({ observe: (a) => seen.push(a.code) }, () => n++);
    for (const c of codes) o.observe(attempt(c));
    expect(n).toBe(calls);
    expect(seen).toEqual(codes); // the metrics still see every attempt
  });
});
