// Every chaos scenario in turn against dist/bunlet, then one summary line each; exit 1 if any failed.
//   bun scripts/chaos/all.ts [name ...]
import { apiPartitionReboot } from "./api-partition-reboot.ts";
import { besteffortHog } from "./besteffort-hog.ts";
import { diskPressure } from "./disk-pressure.ts";
import { fastRamp } from "./fast-ramp.ts";
import { cleanupOnSignals, printResult, runScenario, type Scenario, type ScenarioResult } from "./lib.ts";
import { pidPressure } from "./pid-pressure.ts";
import { restartDuringPressure } from "./restart-during-pressure.ts";
import { softGrace } from "./soft-grace.ts";
import { staticPods } from "./static-pods.ts";
import { swapHog } from "./swap-hog.ts";

export const SCENARIOS: Scenario[] = [
  besteffortHog,
  fastRamp,
  softGrace,
  pidPressure,
  diskPressure,
  restartDuringPressure,
  staticPods,
  apiPartitionReboot,
  swapHog,
];

if (import.meta.main) {
  const wanted = process.argv.slice(2);
  const unknown = wanted.filter((w) => !SCENARIOS.some((s) => s.name === w));
  if (unknown.length) {
    console.error(`unknown scenario ${unknown.join(", ")} (valid: ${SCENARIOS.map((s) => s.name).join(", ")})`);
    process.exit(2);
  }
  cleanupOnSignals();
  const results: ScenarioResult[] = [];
  for (const s of SCENARIOS.filter((x) => wanted.length === 0 || wanted.includes(x.name))) {
    console.log(`\nscenario ${s.name}: ${s.description}`);
    const r = await runScenario(s, { verbose: true });
    printResult(r);
    results.push(r);
  }
  console.log("\n=== summary ===");
  for (const r of results)
    console.log(
      `${r.skipped ? "SKIP" : r.pass ? "PASS" : "FAIL"} ${r.name.padEnd(24)} ${(r.durationMs / 1000).toFixed(1).padStart(5)} s  ${r.checks.filter((c) => c.ok).length}/${r.checks.length} checks${r.error ? `  error: ${r.error}` : ""}`,
    );
  process.exit(results.every((r) => r.pass) ? 0 : 1);
}
