import { expect, test } from "bun:test";
import { applyOomScoreAdj, type OomScoreIo } from "../../src/wire/self-protect.ts";

const errno = (code: string) => Object.assign(new Error(`${code}: write`), { code });

function io(current: number, refuse?: string): OomScoreIo & { value: () => number } {
  let v = current;
  return {
    read: () => `${v}\n`,
    write: (_p, s) => {
      if (refuse) throw errno(refuse);
      v = Number(s);
    },
    value: () => v,
  };
}

test.each([
  ["allowed", -999, io(0), { applied: true, effective: -999 }],
  ["refused without CAP_SYS_RESOURCE", -999, io(0, "EACCES"), { applied: false, effective: 0, error: "EACCES" }],
  ["raising is always allowed", 500, io(0), { applied: true, effective: 500 }],
  ["out of range", -1001, io(0), { applied: false, effective: 0, error: "oomScoreAdj -1001 is outside [-1000, 1000]" }],
] as const)("oom_score_adj: %s", (_name, adj, fake, want) => {
  expect(applyOomScoreAdj(adj, fake)).toMatchObject({ requested: adj, ...want });
});

test("a kernel that clamps the value is reported as not applied", () => {
  const clamping: OomScoreIo = { read: () => "-500", write: () => {} };
  expect(applyOomScoreAdj(-999, clamping)).toMatchObject({ applied: false, effective: -500 });
});
