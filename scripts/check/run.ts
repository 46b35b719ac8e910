// `npm run check`: the fast loop (docs/development.md#the-check). One line per goal — typecheck, lint,
// format, import cycles, upward imports, the house rules, function and file sizes, the pure unit tests —
// then the time it took; exit 1 when any goal fails. No root, containerd or binary.
//   The typecheck and the unit tests run beside the short steps (tsc is one thread; the machine has two).
//   The format is checked only once `.format-enforced` exists (`npm run format`, then create it).
//   The pure unit tests: test/**/*.test.ts outside test/integration, test/e2e and test/chaos whose first
//   line is not a `// machine test` marker.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { checkImports, formatImportReport } from "./imports.ts";
import { formatSizeReport, sizeReport, sizesOk, trackedFiles } from "./size.ts";

const ROOT = new URL("../..", import.meta.url).pathname.replace(/\/$/, "");
const BIN = join(ROOT, "node_modules", ".bin");
/** Whose presence turns the format check on (docs/development.md#lint-and-format). */
export const FORMAT_SWITCH = ".format-enforced";
/** Folders whose tests need the machine: root, cgroups, containerd, the binary, the v2 guest. */
export const MACHINE_FOLDERS = ["test/integration/", "test/e2e/", "test/chaos/"];
/** The first line of a test file elsewhere that needs the machine. */
export const MACHINE_MARKER = /^\/\/ machine test\b/;

/** Whether a test file (repository-relative) is one of the pure unit tests `npm run check` runs. */
export function isPureTest(path: string, firstLine: string): boolean {
  if (!path.startsWith("test/") || !path.endsWith(".test.ts")) return false;
  if (MACHINE_FOLDERS.some((f) => path.startsWith(f))) return false;
  return !MACHINE_MARKER.test(firstLine);
}

function testFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    const p = `${dir}/${e.name}`;
    if (e.isDirectory()) out.push(...testFiles(p));
    else if (e.name.endsWith(".test.ts")) out.push(p);
  }
  return out;
}

export function pureTests(): string[] {
  return testFiles("test")
    .filter((p) => isPureTest(p, readFileSync(join(ROOT, p), "utf8").split("\n", 1)[0] ?? ""))
    .sort();
}

interface Outcome {
  ok: boolean;
  /** The goal's line(s). */
  lines: string[];
  /** What to show under a failure. */
  detail?: string;
}

const seconds = (since: number) => `${((performance.now() - since) / 1000).toFixed(1)} s`;

async function run(cmd: string[], env?: Record<string, string>): Promise<{ code: number; out: string }> {
  const p = Bun.spawn(cmd, { cwd: ROOT, stdout: "pipe", stderr: "pipe", env: { ...process.env, ...env } });
  const [out, err] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text()]);
  return { code: await p.exited, out: out + err };
}

const tail = (text: string, n: number) => text.trimEnd().split("\n").slice(-n).join("\n");

async function typecheck(): Promise<Outcome> {
  const t = performance.now();
  mkdirSync(join(ROOT, ".tmp"), { recursive: true });
  // Incremental: a second run rechecks only what changed (the build info lives in .tmp/, ignored by git).
  const r = await run([join(BIN, "tsc"), "--noEmit", "--incremental", "--tsBuildInfoFile", ".tmp/tsc.tsbuildinfo"]);
  const errors = r.out.match(/error TS\d+/g)?.length ?? 0;
  return r.code === 0
    ? { ok: true, lines: [`typecheck: ok (${seconds(t)})`] }
    : { ok: false, lines: [`typecheck: ${errors} errors (${seconds(t)})`], detail: tail(r.out, 40) };
}

async function lint(): Promise<Outcome> {
  const t = performance.now();
  const r = await run([join(BIN, "biome"), "lint", "--error-on-warnings", "--max-diagnostics=20", "."]);
  const checked = r.out.match(/Checked (\d+) files?/)?.[1] ?? "?";
  return r.code === 0
    ? { ok: true, lines: [`lint: ok, ${checked} files (${seconds(t)})`] }
    : { ok: false, lines: [`lint: failed (${seconds(t)})`], detail: tail(r.out, 60) };
}

async function format(): Promise<Outcome> {
  if (!existsSync(join(ROOT, FORMAT_SWITCH))) return { ok: true, lines: [`format: not enforced yet (${FORMAT_SWITCH} absent)`] };
  const t = performance.now();
  const r = await run([join(BIN, "biome"), "format", "--max-diagnostics=20", "."]);
  const files = r.out.match(/Found (\d+) errors?/)?.[1];
  return r.code === 0
    ? { ok: true, lines: [`format: ok (${seconds(t)})`] }
    : { ok: false, lines: [`format: ${files ?? "some"} files not formatted — npm run format (${seconds(t)})`], detail: tail(r.out, 40) };
}

async function imports(): Promise<Outcome> {
  const r = await checkImports(ROOT);
  return { ok: r.cycles.length + r.upward.length === 0, lines: formatImportReport(r) };
}

async function house(): Promise<Outcome> {
  const r = await run([process.execPath, "scripts/check/house.ts"]);
  return { ok: r.code === 0, lines: r.out.trimEnd().split("\n") };
}

function sizes(): Outcome {
  const files = trackedFiles(ROOT).map((path) => ({ path, text: readFileSync(join(ROOT, path), "utf8") }));
  const report = sizeReport(files);
  // On failure the offenders are listed under the counts, as `bun scripts/check/size.ts --list` names them.
  return { ok: sizesOk(report), lines: formatSizeReport(report, !sizesOk(report)) };
}

async function unitTests(): Promise<Outcome> {
  const t = performance.now();
  const files = pureTests();
  // "./" makes each a path rather than a name filter (which would also match test/integration/…).
  const r = await run([process.execPath, "test", "--timeout", "60000", ...files.map((f) => `./${f}`)]);
  const count = (what: string) => Number(r.out.match(new RegExp(`^\\s*(\\d+) ${what}$`, "m"))?.[1] ?? 0);
  const line = `unit tests: ${count("pass")} pass, ${count("fail")} fail, ${count("skip")} skip in ${files.length} files (${seconds(t)})`;
  if (r.code === 0) return { ok: true, lines: [line] };
  const log = join(ROOT, ".tmp", "check-tests.log");
  mkdirSync(join(ROOT, ".tmp"), { recursive: true });
  writeFileSync(log, r.out);
  const failed = r.out.split("\n").filter((l) => l.startsWith("(fail)"));
  return { ok: false, lines: [line], detail: `${failed.join("\n")}\n${tail(r.out, 30)}\n(whole output: ${relative(process.cwd(), log)})` };
}

function print(o: Outcome): void {
  for (const l of o.lines) console.log(l);
  if (!o.ok && o.detail) console.log(o.detail.replace(/^/gm, "    "));
}

if (import.meta.main) {
  const started = performance.now();
  // The typecheck and the tests are the long steps, the tests mostly waiting (timers, sockets, child
  // processes): both start at once, and the short steps run in turn beside them. Printed in goal order.
  const typechecking = typecheck();
  const testing = unitTests();
  const results: Outcome[] = [];
  for (const step of [lint, format, imports, house, async () => sizes()]) results.push(await step());
  const all = [await typechecking, ...results, await testing];
  for (const o of all) print(o);
  const ok = all.every((o) => o.ok);
  console.log(`check: ${ok ? "ok" : "FAILED"} in ${seconds(started)}`);
  process.exit(ok ? 0 : 1);
}
