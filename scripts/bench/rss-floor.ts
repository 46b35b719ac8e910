// The RSS floor of a compiled bunlet, without containerd or pods (docs/benchmarks.md#rss-floor): what a
// `bun build --compile` binary costs before the agent does any work.
//   bun scripts/bench/rss-floor.ts [--keep=DIR]
// Compiles small probe programs into a temporary directory with the flags of scripts/build.sh and
// prints each one's RSS (anon + file pages) once it has settled:
//   empty          an empty program (a timer): the Bun runtime alone;
//   embedded       a program that carries the agent's whole bundle (src/cli/run.ts behind a dynamic
//                  import) but never imports it — the cost of the embedded code itself;
//   loaded         the same program importing src/cli/run.ts: every module of the agent evaluated,
//                  nothing started (no servers, threads, CRI connection);
// each as one bundle (build.sh's) and, for embedded/loaded, with --splitting (dynamic imports in
// chunks of their own, parsed only when imported). Runs in seconds; needs no heavy lock.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { rssSplitMb } from "./lib/proc.ts";

const ROOT = resolve(import.meta.dir, "../..");
const keep = process.argv.find((a) => a.startsWith("--keep="))?.slice(7);
const dir = keep ?? mkdtempSync(join(tmpdir(), "bunlet-rss-floor-"));
const FLAGS = ["--compile", "--minify", "--bytecode", "--format=esm", "--no-compile-autoload-dotenv", "--no-compile-autoload-bunfig"];

// Each probe prints nothing; it idles until killed, so the measure is taken from outside after it settled.
const sources: Record<string, string> = {
  empty: `setInterval(() => {}, 1 << 30);\nexport {};\n`,
  embedded: `if (process.env.BUNLET_RSS_FLOOR_LOAD === "1") (globalThis as any).m = await import(${JSON.stringify(join(ROOT, "src/cli/run.ts"))});\nsetInterval(() => {}, 1 << 30);\nexport {};\n`,
};

async function compile(name: string, extra: string[]): Promise<string> {
  const src = join(dir, `${name}.ts`);
  const out = join(dir, `${name}${extra.length ? "-split" : ""}`);
  const proc = Bun.spawn([process.execPath, "build", ...FLAGS, ...extra, src, "--outfile", out], { cwd: ROOT, stdout: "ignore", stderr: "pipe" });
  if ((await proc.exited) !== 0) throw new Error(`bun build ${name}: ${await new Response(proc.stderr).text()}`);
  return out;
}

async function measure(binary: string, env: Record<string, string> = {}): Promise<{ rss: number; anon: number; file: number }> {
  const p = Bun.spawn([binary], { env: { ...process.env, ...env }, stdout: "ignore", stderr: "inherit" });
  try {
    await Bun.sleep(3000);
    const { anon, file } = rssSplitMb(p.pid);
    return { rss: anon + file, anon, file };
  } finally {
    p.kill();
    await p.exited;
  }
}

try {
  for (const [name, text] of Object.entries(sources)) writeFileSync(join(dir, `${name}.ts`), text);
  const empty = await compile("empty", []);
  const single = await compile("embedded", []);
  const split = await compile("embedded", ["--splitting"]);
  const rows: [string, { rss: number; anon: number; file: number }][] = [
    ["empty program", await measure(empty)],
    ["agent bundle embedded, not imported (one bundle)", await measure(single)],
    ["agent bundle embedded, not imported (--splitting)", await measure(split)],
    ["agent modules evaluated, nothing started (one bundle)", await measure(single, { BUNLET_RSS_FLOOR_LOAD: "1" })],
    ["agent modules evaluated, nothing started (--splitting)", await measure(split, { BUNLET_RSS_FLOOR_LOAD: "1" })],
  ];
  for (const [label, r] of rows) console.log(`${label.padEnd(56)} RSS ${r.rss.toFixed(1)} MB (anon ${r.anon.toFixed(1)} + file ${r.file.toFixed(1)})`);
  console.log(`Bun ${Bun.version}, ${FLAGS.join(" ")}`);
} finally {
  if (!keep) rmSync(dir, { recursive: true, force: true });
}
