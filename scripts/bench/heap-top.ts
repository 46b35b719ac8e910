// What a V8-format heap snapshot (Bun.generateHeapSnapshot("v8"), e.g. written by the agent's debug memory
// report, src/memory-report.ts) holds, summed: self size by node type and name (objects by constructor,
// strings by their first 40 characters), largest first — to find per-pod objects and strings that keep
// memory alive (docs/development.md#memory-report).
//   bun scripts/bench/heap-top.ts SNAPSHOT.json [--top=N] [--diff=BASE.json]
import { readFileSync } from "node:fs";

const args = process.argv.slice(2);
const file = args.find((a) => !a.startsWith("--"));
if (!file) throw new Error("usage: heap-top.ts SNAPSHOT.json [--top=N] [--diff=BASE.json]");
const top = Number(args.find((a) => a.startsWith("--top="))?.slice(6) ?? 40);
const base = args.find((a) => a.startsWith("--diff="))?.slice(7);

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

function sums(path: string): Map<string, { count: number; bytes: number }> {
  const s = JSON.parse(readFileSync(path, "utf8")) as Snapshot;
  const fields = s.snapshot.meta.node_fields;
  const types = s.snapshot.meta.node_types[0];
  const [iType, iName, iSize] = ["type", "name", "self_size"].map((f) => fields.indexOf(f)) as [number, number, number];
  const out = new Map<string, { count: number; bytes: number }>();
  for (let i = 0; i < s.nodes.length; i += fields.length) {
    const type = types[s.nodes[i + iType]!]!;
    let name = s.strings[s.nodes[i + iName]!] ?? "";
    if (type.includes("string")) name = JSON.stringify(name.slice(0, 40));
    const key = `${type} ${name}`;
    const g = out.get(key) ?? { count: 0, bytes: 0 };
    g.count++;
    g.bytes += s.nodes[i + iSize]!;
    out.set(key, g);
  }
  return out;
}

const now = sums(file);
const before = base ? sums(base) : new Map<string, { count: number; bytes: number }>();
const rows = [...new Set([...now.keys(), ...before.keys()])].map((k) => {
  const a = now.get(k) ?? { count: 0, bytes: 0 };
  const b = before.get(k) ?? { count: 0, bytes: 0 };
  return { k, count: a.count - b.count, bytes: a.bytes - b.bytes };
});
let total = 0;
for (const r of rows) total += r.bytes;
console.log(`${base ? "difference" : "total"}: ${(total / 1024 / 1024).toFixed(2)} MB in ${rows.reduce((n, r) => n + r.count, 0)} nodes`);
for (const r of rows.sort((x, y) => y.bytes - x.bytes).slice(0, top))
  console.log(`${(r.bytes / 1024).toFixed(1).padStart(9)} KB ${String(r.count).padStart(7)}  ${r.k.slice(0, 120)}`);
