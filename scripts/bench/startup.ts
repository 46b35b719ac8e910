// Startup benchmark of the compiled binary: spawn → first `/healthz` ok, and idle RSS 1 s later.
//   bun scripts/bench/startup.ts [runs]                (default 10; builds dist/bunlet first if stale)
//   bun scripts/bench/startup.ts [runs] --arch arm64   dist/bunlet-linux-arm64 under scripts/host/arm64.sh
// Prints median/p90 against the goals (≤ 200 ms to healthy, ≤ 60 MB idle RSS) and the ratios. Under
// QEMU user-mode emulation (arm64 on an x86_64 host) the times are the emulator's, and the RSS is the
// QEMU process's: the arm64 program's memory plus QEMU's own and its translated-code cache.
import { mkdtempSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureBuilt, freePort, spawnBunlet } from "../../test/support/binary.ts";
import { removeTree } from "../../test/support/remove-tree.ts";

const GOAL_STARTUP_MS = 200;
const GOAL_RSS_MB = 60;
const args = process.argv.slice(2);
const arm64 = args.includes("--arch") && args[args.indexOf("--arch") + 1] === "arm64";
const runs = Number(args.find((a) => /^\d+$/.test(a)) ?? 10);
const emulated = arm64 && process.arch !== "arm64";

function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
}

function rssMB(pid: number): number {
  const m = /^VmRSS:\s+(\d+)\s*kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  if (!m) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number(m[1]) / 1024;
}

const binary = await ensureBuilt(arm64 ? "arm64" : undefined);
// Under arm64.sh the agent's pid is QEMU's (the script execs it).
const command = arm64 ? ["bash", join(import.meta.dir, "../host/arm64.sh"), "--", binary] : [binary];
const dir = mkdtempSync(join(tmpdir(), `bunlet-bench-startup-${process.pid}-`));
const startup: number[] = [];
const rss: number[] = [];
try {
  for (let i = 0; i < runs; i++) {
    const healthz = freePort();
    const t0 = performance.now();
    const p = spawnBunlet([`--root-dir=${join(dir, `root-${i}`)}`, `--healthz-port=${healthz}`, `--port=${freePort()}`, "--read-only-port=0"], { command });
    const deadline = t0 + (emulated ? 120_000 : 10_000);
    for (;;) {
      if (p.proc.exitCode !== null) throw new Error(`bunlet exited early:\n${p.stderr()}`);
      if (performance.now() > deadline) throw new Error(`bunlet not healthy after ${((deadline - t0) / 1000).toFixed(0)} s:\n${p.stderr()}`);
      const ok = await fetch(`http://127.0.0.1:${healthz}/healthz`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) break;
      await Bun.sleep(emulated ? 20 : 1);
    }
    startup.push(performance.now() - t0);
    await Bun.sleep(1000);
    rss.push(rssMB(p.pid));
    const code = await p.stop("SIGTERM");
    if (code !== 0) throw new Error(`bunlet exited ${code} on SIGTERM:\n${p.stderr()}`);
  }
} finally {
  removeTree(dir);
}

const fmt = (n: number) => n.toFixed(1);
const line = (what: string, xs: number[], unit: string, goal: number) => {
  const med = percentile(xs, 50);
  const p90 = percentile(xs, 90);
  console.log(
    `${what.padEnd(22)} median ${fmt(med)} ${unit}  p90 ${fmt(p90)} ${unit}  goal ≤ ${goal} ${unit}  ` +
      `median/goal ${(med / goal).toFixed(2)}  p90/goal ${(p90 / goal).toFixed(2)}`,
  );
};
const how = emulated ? " under QEMU user-mode emulation (times and RSS are the emulator's)" : "";
console.log(`bunlet startup benchmark: ${runs} runs of ${binary} (${(statSync(binary).size / 1e6).toFixed(0)} MB)${how}, Bun ${Bun.version}`);
line("spawn → /healthz ok", startup, "ms", GOAL_STARTUP_MS);
line("idle RSS after 1 s", rss, "MB", GOAL_RSS_MB);
