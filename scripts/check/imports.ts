// The import rule (docs/development.md#imports-run-down), checked with dependency-cruiser's API and the
// rules in .dependency-cruiser.mjs: module cycles anywhere in src/, ffi/, scripts/ and test/, and
// imports in src/ and ffi/ that go up the layering. Prints the two counts, then every offender.
// `bun scripts/check/imports.ts`; exit 1 when either count is not 0.
import { cruise, type ICruiseOptions, type IViolation } from "dependency-cruiser";
import extractDepcruiseConfig from "dependency-cruiser/config-utl/extract-depcruise-config";
import extractTSConfig from "dependency-cruiser/config-utl/extract-ts-config";

export interface ImportReport {
  /** Distinct module cycles, each as its modules in import order. */
  cycles: string[][];
  /** Imports against the layering: "from → to (rule)". */
  upward: string[];
}

/** Cycles once each (dependency-cruiser reports a cycle from each of its modules) and layer breaks. */
export function importReport(violations: readonly IViolation[]): ImportReport {
  const cycles = new Map<string, string[]>();
  const upward: string[] = [];
  for (const v of violations) {
    if (v.rule.name === "no-circular") {
      const path = [v.from, ...(v.cycle ?? []).map((c) => c.name)];
      const members = [...new Set(path)];
      const key = [...members].sort().join(" ");
      if (!cycles.has(key)) cycles.set(key, path);
    } else if (v.rule.name.startsWith("layer:")) {
      upward.push(`${v.from} → ${v.to} (${v.rule.name})`);
    }
  }
  return { cycles: [...cycles.values()], upward };
}

export function formatImportReport(r: ImportReport): string[] {
  const out = [`import cycles: ${r.cycles.length}`];
  for (const c of r.cycles) out.push(`  ${c.join(" → ")}`);
  out.push(`upward imports: ${r.upward.length}`);
  for (const u of r.upward) out.push(`  ${u}`);
  return out;
}

export async function checkImports(root: string): Promise<ImportReport> {
  const cwd = process.cwd();
  process.chdir(root); // dependency-cruiser resolves and reports relative to the working directory
  try {
    const config = await extractDepcruiseConfig("./.dependency-cruiser.mjs");
    const options: ICruiseOptions = { ...config.options, ruleSet: { forbidden: config.forbidden }, validate: true };
    const result = await cruise(["src", "ffi", "scripts", "test"], options, {}, { tsConfig: extractTSConfig("tsconfig.json") });
    if (typeof result.output === "string") throw new Error(`dependency-cruiser: unexpected output ${result.output.slice(0, 200)}`);
    return importReport(result.output.summary.violations);
  } finally {
    process.chdir(cwd);
  }
}

if (import.meta.main) {
  const r = await checkImports(new URL("../..", import.meta.url).pathname);
  for (const l of formatImportReport(r)) console.log(l);
  process.exit(r.cycles.length + r.upward.length === 0 ? 0 : 1);
}
