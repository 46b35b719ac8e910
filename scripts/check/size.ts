// Size of the code, a goal of `npm run check` that fails when any is over: functions over 80 lines of
// their own code and files over 500 lines in src/ and ffi/ (docs/development.md#the-check).
//   A function's own code is the lines of its body that hold code, less the inside of the functions
//   nested in it: a callback's first and last line count for the function that passes it, its inside
//   for the callback. Blank and comment-only lines do not count.
// `bun scripts/check/size.ts [--list]` prints the two counts, and with --list every offender; it exits 1
// when either count is not 0.
// countFunctions is a pure function over (path, text), table-tested in test/check/size.test.ts.
import { readFileSync } from "node:fs";
import ts from "typescript";

export const FUNCTION_MAX_LINES = 80;
export const FILE_MAX_LINES = 500;

export interface FunctionSize {
  name: string;
  /** 1-based line of the function's start. */
  line: number;
  /** Lines of its own code. */
  ownLines: number;
}

type FunctionNode = ts.FunctionLikeDeclaration & { body: ts.Node };

function isFunctionWithBody(n: ts.Node): n is FunctionNode {
  return (
    (ts.isFunctionDeclaration(n) ||
      ts.isFunctionExpression(n) ||
      ts.isArrowFunction(n) ||
      ts.isMethodDeclaration(n) ||
      ts.isConstructorDeclaration(n) ||
      ts.isGetAccessorDeclaration(n) ||
      ts.isSetAccessorDeclaration(n)) &&
    n.body !== undefined
  );
}

/** What a reader calls the function: its own name, or the variable, property or call it is given to. */
function functionName(fn: FunctionNode, sf: ts.SourceFile): string {
  if (fn.name) return fn.name.getText(sf);
  if (ts.isConstructorDeclaration(fn)) return "constructor";
  const p = fn.parent;
  if ((ts.isVariableDeclaration(p) || ts.isPropertyAssignment(p) || ts.isPropertyDeclaration(p)) && p.name) return p.name.getText(sf);
  if (ts.isCallExpression(p)) return `${p.expression.getText(sf).slice(0, 40)}(…) callback`;
  return "<anonymous>";
}

/** The 0-based lines that hold a token (code, not comment or blank). */
function codeLines(sf: ts.SourceFile): Set<number> {
  const lines = new Set<number>();
  const visit = (n: ts.Node): void => {
    const children = n.getChildren(sf);
    if (children.length === 0) {
      if (n.kind === ts.SyntaxKind.EndOfFileToken) return;
      const from = sf.getLineAndCharacterOfPosition(n.getStart(sf)).line;
      const to = sf.getLineAndCharacterOfPosition(n.getEnd()).line;
      for (let l = from; l <= to; l++) lines.add(l);
      return;
    }
    for (const c of children) if (!ts.isJSDoc(c)) visit(c);
  };
  visit(sf);
  return lines;
}

/** Every function with a body in `text`, with the lines of its own code. */
export function countFunctions(path: string, text: string): FunctionSize[] {
  const sf = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const code = codeLines(sf);
  const lineOf = (pos: number) => sf.getLineAndCharacterOfPosition(pos).line;
  const out: FunctionSize[] = [];
  const measure = (fn: FunctionNode): void => {
    const first = lineOf(fn.body.getStart(sf));
    const last = lineOf(fn.body.getEnd());
    // Lines strictly inside a nested function's body are that function's.
    const nested = new Set<number>();
    const collect = (n: ts.Node): void => {
      if (isFunctionWithBody(n)) {
        const a = lineOf(n.body.getStart(sf));
        const b = lineOf(n.body.getEnd());
        for (let l = a + 1; l < b; l++) nested.add(l);
        return;
      }
      ts.forEachChild(n, collect);
    };
    ts.forEachChild(fn.body, collect);
    let own = 0;
    for (let l = first; l <= last; l++) if (code.has(l) && !nested.has(l)) own++;
    out.push({ name: functionName(fn, sf), line: lineOf(fn.getStart(sf)) + 1, ownLines: own });
  };
  const visit = (n: ts.Node): void => {
    if (isFunctionWithBody(n)) measure(n);
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

export interface SizeReport {
  longFunctions: (FunctionSize & { path: string })[];
  longFiles: { path: string; lines: number }[];
}

/** The product's TypeScript: src/ and ffi/ (the protobuf definitions are .proto, not counted). */
export function isMeasured(path: string): boolean {
  return /^(src|ffi)\/.*\.ts$/.test(path) && !path.endsWith(".d.ts");
}

export function sizeReport(files: { path: string; text: string }[]): SizeReport {
  const report: SizeReport = { longFunctions: [], longFiles: [] };
  for (const { path, text } of files) {
    const lines = text.endsWith("\n") ? text.split("\n").length - 1 : text.split("\n").length;
    if (lines > FILE_MAX_LINES) report.longFiles.push({ path, lines });
    for (const f of countFunctions(path, text)) if (f.ownLines > FUNCTION_MAX_LINES) report.longFunctions.push({ path, ...f });
  }
  report.longFunctions.sort((a, b) => b.ownLines - a.ownLines);
  report.longFiles.sort((a, b) => b.lines - a.lines);
  return report;
}

/** Whether the code keeps to both sizes. */
export const sizesOk = (r: SizeReport): boolean => r.longFunctions.length === 0 && r.longFiles.length === 0;

/** The report's two lines, and with `list` every offender under them. */
export function formatSizeReport(r: SizeReport, list = false): string[] {
  const out = [
    `functions over ${FUNCTION_MAX_LINES} lines of own code: ${r.longFunctions.length}`,
    `files over ${FILE_MAX_LINES} lines: ${r.longFiles.length}`,
  ];
  if (list) {
    for (const f of r.longFunctions) out.push(`  ${f.path}:${f.line} ${f.name} ${f.ownLines}`);
    for (const f of r.longFiles) out.push(`  ${f.path} ${f.lines}`);
  }
  return out;
}

export function trackedFiles(root: string): string[] {
  const r = Bun.spawnSync(["git", "ls-files", "-co", "--exclude-standard", "src", "ffi"], { cwd: root, stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`git ls-files: ${r.stderr.toString().trim()}`);
  return r.stdout.toString().split("\n").filter(isMeasured);
}

if (import.meta.main) {
  const root = new URL("../..", import.meta.url).pathname;
  const files = trackedFiles(root).map((path) => ({ path, text: readFileSync(`${root}/${path}`, "utf8") }));
  const report = sizeReport(files);
  for (const l of formatSizeReport(report, process.argv.includes("--list"))) console.log(l);
  process.exit(sizesOk(report) ? 0 : 1);
}
