// House rules of the repository, checked: `bun scripts/check/house.ts` prints one line per rule with
// its count, then every offending line as path:line, and exits 1 when any rule is broken.
//   1. README.md is at most 300 lines (details live in docs/).
//   2. No work history in files: numbered work sessions, rounds or findings, our own issue numbers,
//      dates or clock times of work, commit hashes cited as events. History lives in git; figures live
//      in docs/benchmarks.md, docs/upstream.md (conformance results) and docs/adr/ with the date they were measured on ("measured on DATE").
//   3. No links out of the repository: a relative Markdown link that resolves outside it, or a
//      reference to documents that are not in it (the shared design and eviction spec).
//   4. No broken links: a relative Markdown link, or a `docs/….md#anchor` citation in code, whose file
//      or heading does not exist. Pages other people are writing are allowed (PENDING_PAGES).
// The rules are pure functions over (path, text) so test/check/house.test.ts can table-test them.
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, normalize, relative, resolve, sep } from "node:path";

export const README_MAX_LINES = 300;

/** Pages linked before they exist: each is being written elsewhere. */
export const PENDING_PAGES: ReadonlySet<string> = new Set(["docs/pod-spec.md", "docs/security.md", "docs/security-pod.md", "docs/upstream.md"]);

/** This checker and its test spell out the patterns they look for. */
const SELF: ReadonlySet<string> = new Set(["scripts/check/house.ts", "test/check/house.test.ts"]);

/** Files the checks read: text sources and docs. Lock files, images and data dumps are skipped. */
export function isChecked(path: string): boolean {
  if (SELF.has(path) || path.startsWith("node_modules/") || path.includes("/node_modules/")) return false;
  if (/(^|\/)(package-lock\.json|bun\.lockb?)$/.test(path)) return false;
  return /\.(ts|js|mjs|sh|md|ya?ml|json|toml|proto|txt|conf)$/.test(path) || /(^|\/)(run|Dockerfile)$/.test(path);
}

export interface Hit {
  path: string;
  line: number;
  rule: string;
  text: string;
}

const ORDINALS = "first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth";
/** Our own tracker's numbers are small; a number this large is an upstream (kubernetes) issue or PR. */
const UPSTREAM_ISSUE_MIN = 1000;
const DATE = /\b20\d\d-[01]\d-[0-3]\d\b(?!T\d)/;
const WORK_WORDS =
  /\b(sessions?|rounds?|found|fixed|tried|ran|runs?|landed|measured|bench(ed)?|UTC|load average|lock hold|host|machine|today|yesterday|commit(ted)?|helpers?)\b/i;

/** One line's work-history rule, or undefined. `path` decides where "measured on DATE" is allowed. */
export function historyRule(path: string, line: string): string | undefined {
  if (/\bsessions? \d+/i.test(line)) return "work session";
  if (new RegExp(`\\b(${ORDINALS}) round\\b|\\bround \\d+\\b`, "i").test(line)) return "work round";
  if (/\bfindings? \d+/i.test(line)) return "finding";
  for (const m of line.matchAll(/\bissues? #?(\d+)/gi)) if (Number(m[1]) < UPSTREAM_ISSUE_MIN) return "issue number";
  if (/\bother helpers\b|\bhelpers' (work|guests|runs|benchmarks)\b/i.test(line)) return "who did the work";
  if (/\b[0-2]\d:[0-5]\d\s?UTC\b|\b[0-2]\d:[0-5]\d\s?[–-]\s?[0-2]\d:[0-5]\d\b|\([0-2]\d:[0-5]\d[,;)]/.test(line)) return "clock time of work";
  if (/\((?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,12}\)/.test(line)) return "commit cited as an event";
  if (DATE.test(line) && WORK_WORDS.test(line)) {
    const figuresPage = path === "docs/benchmarks.md" || path === "docs/upstream.md" || path.startsWith("docs/adr/");
    if (!(figuresPage && /\bmeasured on\b/i.test(line))) return "date of work";
  }
  return undefined;
}

export function historyHits(path: string, text: string): Hit[] {
  const hits: Hit[] = [];
  text.split("\n").forEach((l, i) => {
    const rule = historyRule(path, l);
    if (rule) hits.push({ path, line: i + 1, rule, text: l.trim() });
  });
  return hits;
}

/** Relative Markdown link targets of one line: `[text](target)`, without http(s), mailto or pure anchors. */
export function markdownLinks(line: string): string[] {
  const out: string[] = [];
  for (const m of line.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
    const t = m[1]!;
    if (/^[a-z][a-z0-9+.-]*:/i.test(t)) continue;
    out.push(t);
  }
  return out;
}

/** Where a link from `fromPath` (repository-relative) points, repository-relative; ".." first if outside. */
export function resolveLink(fromPath: string, target: string): { file: string; anchor?: string } {
  const [file, anchor] = target.split("#", 2) as [string, string | undefined];
  const resolved =
    file === ""
      ? fromPath
      : normalize(join(dirname(fromPath), file))
          .split(sep)
          .join("/");
  return { file: resolved, anchor };
}

/** The shared design and eviction spec live outside the repository; "§N" cites their sections. */
const OUTSIDE_DOCS = /\.\.\/shared\b|\/work\/shared\b|(^|[^\w./])shared\/[\w.-]+\.md\b|\beviction-spec(\.md)?\b|\bdesign\.md\b|\bconventions\.md\b|§\s?\d/;

export function outsideHits(path: string, text: string): Hit[] {
  const hits: Hit[] = [];
  text.split("\n").forEach((l, i) => {
    if (OUTSIDE_DOCS.test(l)) hits.push({ path, line: i + 1, rule: "document outside the repository", text: l.trim() });
    if (path.endsWith(".md")) {
      for (const t of markdownLinks(l)) {
        if (resolveLink(path, t).file.startsWith("../") || t.startsWith("/"))
          hits.push({ path, line: i + 1, rule: `link out of the repository: ${t}`, text: l.trim() });
      }
    }
  });
  return hits;
}

/** GitHub's anchor for a heading's text: lower case, punctuation dropped, spaces to hyphens. */
export function headingAnchor(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/<[^>]+>/g, "")
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .trim()
    .replace(/\s/g, "-");
}

/** The anchors of a Markdown file's headings; a repeated heading gets -1, -2… as on GitHub. */
export function headingAnchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  let fenced = false;
  for (const l of markdown.split("\n")) {
    if (/^\s*```/.test(l)) fenced = !fenced;
    const h = !fenced && /^#{1,6}\s+(.+?)\s*#*\s*$/.exec(l);
    if (!h) continue;
    const base = headingAnchor(h[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

export interface Repo {
  exists(path: string): boolean;
  read(path: string): string | undefined;
}

/** A link's file must exist (or be pending) and its anchor, if any, must be one of the file's headings. */
function linkProblem(repo: Repo, file: string, anchor: string | undefined, prefix = false): string | undefined {
  if (PENDING_PAGES.has(file)) return undefined;
  if (!repo.exists(file)) return "missing file";
  if (anchor === undefined || anchor === "" || !file.endsWith(".md")) return undefined;
  const text = repo.read(file);
  if (text === undefined) return undefined;
  const anchors = headingAnchors(text);
  const found = prefix ? [...anchors].some((a) => a.startsWith(anchor)) : anchors.has(anchor);
  return found ? undefined : "missing heading";
}

export function brokenLinkHits(path: string, text: string, repo: Repo): Hit[] {
  const hits: Hit[] = [];
  text.split("\n").forEach((l, i) => {
    // prefix: a citation whose quoted heading continues on the next line; its start must begin a heading.
    const targets: Array<{ file: string; anchor?: string; shown: string; prefix?: boolean }> = [];
    if (path.endsWith(".md")) {
      for (const t of markdownLinks(l)) {
        const r = resolveLink(path, t);
        if (!r.file.startsWith("../") && !t.startsWith("/")) targets.push({ ...r, shown: t });
      }
    } else {
      // Citations in code are repository-relative: `docs/eviction-contract.md#thresholds-met`, or a
      // README section by its heading: README "Quick start".
      for (const m of l.matchAll(/\b(docs\/[\w./-]+\.md)(?:#([\w-]+))?/g)) targets.push({ file: m[1]!, anchor: m[2], shown: m[0] });
      for (const m of l.matchAll(/\bREADME,? "([^"]+)("|$)/g)) {
        targets.push({ file: "README.md", anchor: headingAnchor(m[1]!), shown: m[0], prefix: m[2] === "" });
      }
    }
    for (const t of targets) {
      const problem = linkProblem(repo, t.file, t.anchor, t.prefix);
      if (problem) hits.push({ path, line: i + 1, rule: `${problem}: ${t.shown}`, text: l.trim() });
    }
  });
  return hits;
}

export interface Report {
  readmeLines: number;
  history: Hit[];
  outside: Hit[];
  broken: Hit[];
}

export function check(paths: readonly string[], repo: Repo): Report {
  const report: Report = { readmeLines: 0, history: [], outside: [], broken: [] };
  for (const path of paths) {
    if (!isChecked(path)) continue;
    const text = repo.read(path);
    if (text === undefined) continue;
    if (path === "README.md") report.readmeLines = text.endsWith("\n") ? text.split("\n").length - 1 : text.split("\n").length;
    report.history.push(...historyHits(path, text));
    report.outside.push(...outsideHits(path, text));
    report.broken.push(...brokenLinkHits(path, text, repo));
  }
  return report;
}

export function format(r: Report): { lines: string[]; ok: boolean } {
  const readmeOk = r.readmeLines <= README_MAX_LINES;
  const lines = [
    `README lines: ${r.readmeLines} (at most ${README_MAX_LINES})${readmeOk ? "" : " — too long"}`,
    `work history: ${r.history.length}`,
    `links out of the repository: ${r.outside.length}`,
    `broken links: ${r.broken.length}`,
  ];
  for (const h of [...r.history, ...r.outside, ...r.broken]) lines.push(`  ${h.path}:${h.line}: ${h.rule}: ${h.text.slice(0, 160)}`);
  return { lines, ok: readmeOk && r.history.length === 0 && r.outside.length === 0 && r.broken.length === 0 };
}

if (import.meta.main) {
  const root = resolve(import.meta.dir, "../..");
  const listed = Bun.spawnSync(["git", "ls-files", "--cached", "--others", "--exclude-standard"], { cwd: root });
  if (listed.exitCode !== 0) {
    console.error(`house: git ls-files failed in ${root}: ${listed.stderr.toString().trim()}`);
    process.exit(2);
  }
  const paths = listed.stdout
    .toString()
    .split("\n")
    .filter((p) => p !== "" && existsSync(join(root, p)));
  const inRepo = (p: string) => !relative(root, join(root, p)).startsWith("..");
  const repo: Repo = {
    exists: (p) => inRepo(p) && existsSync(join(root, p)),
    read: (p) => {
      try {
        return readFileSync(join(root, p), "utf8");
      } catch {
        return undefined;
      }
    },
  };
  const { lines, ok } = format(check(paths, repo));
  for (const l of lines) console.log(l);
  process.exit(ok ? 0 : 1);
}
