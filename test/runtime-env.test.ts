import { expect, test } from "bun:test";
import { spawnSync } from "bun";
import { runsAgent } from "../src/cli/dispatch.ts";
import { RUNTIME_ENV, RUNTIME_ENV_MARKER, runtimeEnvStep } from "../src/runtime-env.ts";

const WANT = { A_KNOB: "1", B_KNOB: "x" };

test.each([
  [
    "nothing set: re-exec with both knobs and the marker naming them",
    { PATH: "/bin" },
    { kind: "exec", env: { PATH: "/bin", A_KNOB: "1", B_KNOB: "x", [RUNTIME_ENV_MARKER]: "A_KNOB,B_KNOB" } },
  ],
  [
    "the operator's own value is kept, only the missing knob added",
    { A_KNOB: "0" },
    { kind: "exec", env: { A_KNOB: "0", B_KNOB: "x", [RUNTIME_ENV_MARKER]: "B_KNOB" } },
  ],
  ["all set by the operator: no re-exec", { A_KNOB: "0", B_KNOB: "y" }, { kind: "none" }],
  ["turned off", { [RUNTIME_ENV_MARKER]: "0" }, { kind: "none" }],
  [
    "the re-executed process removes what it was given",
    { A_KNOB: "1", B_KNOB: "x", [RUNTIME_ENV_MARKER]: "A_KNOB,B_KNOB" },
    { kind: "cleanup", keys: ["A_KNOB", "B_KNOB"] },
  ],
  [
    "a marker naming keys outside the tuning removes none of them",
    { PATH: "/bin", [RUNTIME_ENV_MARKER]: "PATH,B_KNOB" },
    { kind: "cleanup", keys: ["B_KNOB"] },
  ],
] as const)("%s", (_name, env, want) => {
  expect(runtimeEnvStep(env, WANT)).toEqual(want as never);
});

// Only the agent's run re-executes with the tuning (src/main.ts); subcommands, help and version start once.
test.each([
  [[], true],
  [["--config", "/etc/kubelet.yaml", "-v=2"], true],
  [["--hostname-override", "version"], true],
  [["version"], false],
  [["config", "print"], false],
  [["eviction", "simulate"], false],
  [["help"], false],
  [["--config", "x", "--help"], false],
  [["--version=raw"], false],
  [["toString"], true],
] as const)("runsAgent(%j) = %p", (argv, want) => {
  expect(runsAgent(argv)).toBe(want);
});

test("a process re-executes itself once (execve: same pid) with the tuning and its argv, and leaves the tuning out of process.env", () => {
  const script = `
    import { applyRuntimeEnv } from ${JSON.stringify(`${import.meta.dir}/../src/runtime-env.ts`)};
    const before = { gc: process.env.BUN_GC_TIMER_DISABLE, marker: process.env.${RUNTIME_ENV_MARKER} };
    applyRuntimeEnv();
    const child = require("node:child_process").execSync("echo \${BUN_GC_TIMER_DISABLE:-unset}").toString().trim();
    console.log(JSON.stringify({ pid: process.pid, args: process.argv.slice(-2), before, after: process.env.BUN_GC_TIMER_DISABLE ?? null, child }));
  `;
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !(k in RUNTIME_ENV) && k !== RUNTIME_ENV_MARKER) env[k] = v;
  const r = spawnSync([process.execPath, "-e", script, "--", "one", "two"], { env });
  expect(r.exitCode).toBe(0);
  const lines = r.stdout.toString().trim().split("\n");
  expect(lines).toHaveLength(1); // printed only by the re-executed process
  const out = JSON.parse(lines[0]!);
  // What the re-executed process saw at its start: the knob and the marker, then neither.
  expect(out.before).toEqual({ gc: "1", marker: Object.keys(RUNTIME_ENV).join(",") });
  expect(out.after).toBeNull();
  expect(out.child).toBe("unset");
  expect(out.args).toEqual(["one", "two"]);
});
