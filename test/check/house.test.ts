// The house rules' pure functions (scripts/check/house.ts), table by table.
import { describe, expect, test } from "bun:test";
import {
  brokenLinkHits,
  check,
  format,
  headingAnchor,
  headingAnchors,
  historyRule,
  isChecked,
  markdownLinks,
  outsideHits,
  resolveLink,
  type Repo,
} from "../../scripts/check/house.ts";

/** An in-memory repository: path → text. */
const repoOf = (files: Record<string, string>): Repo => ({
  exists: (p) => p in files,
  read: (p) => files[p],
});

describe("historyRule", () => {
  test.each([
    ["src/a.ts", "// seen in session 17 of the bench", "work session"],
    ["docs/x.md", "**Session 19 (…)**: all three agents", "work session"],
    ["README.md", "Fifth round: RSS and the empty node's CPU", "work round"],
    ["src/a.ts", "// issue 14 finding 8: counts survive restarts", "finding"],
    ["src/a.ts", "/** Largest file read (issue #14: hostile config files). */", "issue number"],
    ["test/a.test.ts", "// Issue #10's proof: the whole chaos suite", "issue number"],
    ["README.md", "on a machine shared with other helpers' work", "who did the work"],
    ["docs/x.md", "`--runs 8` (2026-12-02 07:51 UTC, load average 3–5)", "clock time of work"],
    ["docs/x.md", "the at-the-line fix (d83f203) was measured", "commit cited as an event"],
    ["scripts/k.sh", "# found on 2026-12-02 on an AMX host", "date of work"],
    ["docs/benchmarks.md", "figures of 2026-12-02, load average 2–10", "date of work"],
  ])("%s: %s → %s", (path, line, rule) => {
    expect(historyRule(path, line)).toBe(rule);
  });

  test.each([
    ["docs/benchmarks.md", "Measured on 2026-12-04, two guest sessions, crossing → victim got its signal:"],
    ["docs/adr/0001-x.md", "`reaction.ts`, measured on 2026-12-02 on a 2-vCPU VM"],
    ["docs/upstream.md", "Latest runs, Kubernetes v1.37.2, measured on 2026-12-06 on the 2-CPU machine"],
    ["src/a.ts", "// a negative max passes through (kubernetes/kubernetes#118172)"],
    ["src/a.ts", "// upstream issue #118172: a negative max passes through"],
    ["test/a.test.ts", 'nowMs: Date.parse("2026-12-01T10:00:00Z"), // a fixed clock'],
    ["docs/x.md", "    threshold crossed  2026-11-29T13:59:35.407379Z"],
    ["docs/x.md", "I1129 13:59:35.415000    1107] node conditions changed from=none to=MemoryPressure"],
    ["src/a.ts", "// Still missing → nothing to rotate this round."],
    ["docs/x.md", "compare agents side by side inside one guest session, not against the host"],
    ["src/a.ts", "const round: CpuRound = new Map();"],
    ["test/a.test.ts", 'command: sh("echo started >> /shared/fail.log")'],
  ])("%s: %s → none", (path, line) => {
    expect(historyRule(path, line)).toBeUndefined();
  });

  test("a date is allowed only where figures live, and only as the day they were measured on", () => {
    const line = "the same runs, measured on 2026-12-03 in the guest";
    expect(historyRule("docs/benchmarks.md", line)).toBeUndefined();
    expect(historyRule("docs/adr/0005-guest.md", line)).toBeUndefined();
    expect(historyRule("docs/eviction.md", line)).toBe("date of work");
    expect(historyRule("src/kernel/a.ts", `// ${line}`)).toBe("date of work");
  });
});

describe("links", () => {
  test.each([
    ["see [the contract](eviction-contract.md#pitfalls) and [web](https://kubernetes.io/docs/)", ["eviction-contract.md#pitfalls"]],
    ['[a](../b.md "title") and [c](#local)', ["../b.md", "#local"]],
    ["no link here: `arr[0](x)` is code", ["x"]],
    ["[mail](mailto:a@b.c)", []],
  ])("markdownLinks(%s)", (line, want) => {
    expect(markdownLinks(line)).toEqual(want);
  });

  test.each([
    ["docs/eviction.md", "eviction-contract.md#thresholds-met", { file: "docs/eviction-contract.md", anchor: "thresholds-met" }],
    ["docs/adr/0001-x.md", "../benchmarks.md#idle-cost", { file: "docs/benchmarks.md", anchor: "idle-cost" }],
    ["README.md", "docs/adr/", { file: "docs/adr/", anchor: undefined }],
    ["README.md", "../shared/design.md", { file: "../shared/design.md", anchor: undefined }],
    ["docs/pods.md", "#pod-spec-support", { file: "docs/pods.md", anchor: "pod-spec-support" }],
  ])("resolveLink(%s, %s)", (from, target, want) => {
    expect(resolveLink(from, target)).toEqual(want);
  });

  test.each([
    ["The eviction fast path on cgroup v2", "the-eviction-fast-path-on-cgroup-v2"],
    ["Pod security, namespaces, hosts and DNS", "pod-security-namespaces-hosts-and-dns"],
    ["`bunlet eviction simulate`", "bunlet-eviction-simulate"],
    ["0001. Decide on the notifier thread", "0001-decide-on-the-notifier-thread"],
    ["What is in `examples/monitoring/`", "what-is-in-examplesmonitoring"],
  ])("headingAnchor(%s)", (heading, want) => {
    expect(headingAnchor(heading)).toBe(want);
  });

  test("headingAnchors numbers repeats and ignores fenced code", () => {
    const md = "# Title\n## Notes\n```sh\n# not a heading\n```\n## Notes\n";
    expect([...headingAnchors(md)]).toEqual(["title", "notes", "notes-1"]);
  });

  test("outsideHits: shared documents, section marks, and Markdown links that leave the repository", () => {
    const hits = (path: string, text: string) => outsideHits(path, text).map((h) => h.rule);
    expect(hits("src/a.ts", "// see /work/shared/eviction-spec.md §3.2")).toEqual(["document outside the repository"]);
    expect(hits("src/a.ts", "// upstream order (§8)")).toEqual(["document outside the repository"]);
    expect(hits("scripts/b.sh", "# (see shared/host-facts.md)")).toEqual(["document outside the repository"]);
    expect(hits("docs/x.md", "the [map](../../other/map.md)")).toEqual(["link out of the repository: ../../other/map.md"]);
    expect(hits("docs/x.md", "the [map](architecture.md), [guest](cgroup-v2.md#the-cgroup-v2-test-guest)")).toEqual([]);
    expect(hits("test/a.test.ts", "sh(\"trap 'echo term >> /shared/hooks.log' TERM\")")).toEqual([]);
    expect(hits("scripts/u.sh", "--- a/arch/x86/um/shared/sysdep/ptrace.h")).toEqual([]);
  });

  test("brokenLinkHits: missing files and headings; pages being written elsewhere are allowed", () => {
    const repo = repoOf({ "docs/eviction.md": "# Eviction\n## What it prints\n", "README.md": "# bunlet\n## On a fresh machine\n" });
    const rules = (path: string, text: string) => brokenLinkHits(path, text, repo).map((h) => h.rule);
    expect(rules("README.md", "[e](docs/eviction.md#what-it-prints) [s](docs/security.md) [u](docs/upstream.md)")).toEqual([]);
    expect(rules("README.md", "[e](docs/eviction.md#nowhere)")).toEqual(["missing heading: docs/eviction.md#nowhere"]);
    expect(rules("README.md", "[c](docs/chaos.md)")).toEqual(["missing file: docs/chaos.md"]);
    expect(rules("src/a.ts", "// docs/eviction.md#what-it-prints and docs/eviction.md#gone")).toEqual(["missing heading: docs/eviction.md#gone"]);
    expect(rules("src/a.ts", '// see README "On a fresh machine"')).toEqual([]);
    expect(rules("src/a.ts", '// see README "Idle cost"')).toEqual(['missing heading: README "Idle cost"']);
    expect(rules("src/a.ts", '// see README "On a fresh')).toEqual([]);
  });
});

describe("check and format", () => {
  test("isChecked: sources and docs, not dependencies or lock files", () => {
    expect(["src/a.ts", "docs/x.md", "scripts/b.sh", ".ci/run", "examples/m/p.yml"].map(isChecked)).toEqual([true, true, true, true, true]);
    expect(["node_modules/x/index.js", "package-lock.json", "scripts/check/house.ts", "test/check/house.test.ts", "img.png"].map(isChecked)).toEqual([
      false,
      false,
      false,
      false,
      false,
    ]);
  });

  test("one line per rule with its count, then the offending lines; ok only when all are zero", () => {
    const long = Array.from({ length: 301 }, (_, i) => `line ${i}`).join("\n") + "\n";
    const files = { "README.md": long, "src/a.ts": "// issue #14\n// see ../shared/design.md\n", "docs/x.md": "[y](y.md)\n" };
    const { lines, ok } = format(check(Object.keys(files), repoOf(files)));
    expect(ok).toBe(false);
    expect(lines.slice(0, 4)).toEqual(["README lines: 301 (at most 300) — too long", "work history: 1", "links out of the repository: 1", "broken links: 1"]);
    expect(lines.slice(4)).toEqual([
      "  src/a.ts:1: issue number: // issue #14",
      "  src/a.ts:2: document outside the repository: // see ../shared/design.md",
      "  docs/x.md:1: missing file: y.md: [y](y.md)",
    ]);
    const clean = { "README.md": "# bunlet\n", "docs/x.md": "[r](../README.md)\n" };
    expect(format(check(Object.keys(clean), repoOf(clean)))).toEqual({
      lines: ["README lines: 1 (at most 300)", "work history: 0", "links out of the repository: 0", "broken links: 0"],
      ok: true,
    });
  });
});
