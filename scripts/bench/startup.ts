// Startup benchmark of the compiled binary: spawn → first `/healthz` ok, and idle RSS 1 s later.
//   bun scripts/bench/startup.ts [runs]      (default 10; builds dist/bunlet first if stale)
// Prints median/p90 against the goals (≤ 200 ms to healthy, ≤ 60 MB idle RSS) and the ratios.
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BINARY, ensureBuilt, freePort, spawnBunlet } from "../../test/support/binary.ts";

const GOAL_STARTUP_MS = 200;
const GOAL_RSS_MB = 60;
const runs = Number(process.argv[2] ?? 10);

function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
}

function rssMB(pid: number): number {
  const m = /^VmRSS:\s+(\d+)\s*kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  if (!m) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number(m[1]) / 1024;
}

await ensureBuilt();
const dir = mkdtempSync(join(tmpdir(), `bunlet-bench-startup-${process.pid}-`));
const startup: number[] = [];
const rss: number[] = [];
try {
  for (let i = 0; i < runs; i++) {
    const healthz = freePort();
    const t0 = performance.now();
    const p = spawnBunlet([`--root-dir=${join(dir, `root-${i}`)}`, `--healthz-port=${healthz}`, `--port=${freePort()}`, "--read-only-port=0"]);
    const deadline = t0 + 10_000;
    for (;;) {
      if (p.proc.exitCode !== null) throw new Error(`bunlet exited early:\n${p.stderr()}`);
      if (performance.now() > deadline) throw new Error(`bunlet not healthy after 10 s:\n${p.stderr()}`);
      const ok = await fetch(`http://127.0.0.1:${healthz}/healthz`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) break;
      await Bun.sleep(1);
    }
    startup.push(performance.now() - t0);
    await Bun.sleep(1000);
    rss.push(rssMB(p.pid));
    const code = await p.stop("SIGTERM");
    if (code !== 0) throw new Error(`bunlet exited ${code} on SIGTERM:\n${p.stderr()}`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
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
console.log(`bunlet startup benchmark: ${runs} runs of ${BINARY} (${(statSync(BINARY).size / 1e6).toFixed(0)} MB), Bun ${Bun.version}`);
line("spawn → /healthz ok", startup, "ms", GOAL_STARTUP_MS);
line("idle RSS after 1 s", rss, "MB", GOAL_RSS_MB);
