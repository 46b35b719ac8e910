// Label and field selectors as kube-apiserver parses them (k8s.io/apimachinery/pkg/labels, fields):
// labels: "a=b", "a==b", "a!=b", "a in (x,y)", "a notin (x)", "a", "!a"; fields: "a.b=c", "a.b!=c".
import type { Obj } from "./store.ts";

export class SelectorError extends Error {}

type Match = (labels: Record<string, string>) => boolean;

function splitTop(s: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = "";
  for (const ch of s) {
    if (ch === "(") depth++;
    if (ch === ")") depth--;
    if (ch === "," && depth === 0) {
      out.push(cur);
      cur = "";
    } else cur += ch;
  }
  if (cur.trim()) out.push(cur);
  return out.map((x) => x.trim()).filter(Boolean);
}

function labelTerm(t: string): Match {
  let m = /^(\S+)\s+(in|notin)\s+\((.*)\)$/.exec(t);
  if (m) {
    const [, key, op, vals] = m;
    const set = new Set(vals!.split(",").map((v) => v.trim()));
    return op === "in" ? (l) => key! in l && set.has(l[key!]!) : (l) => !(key! in l) || !set.has(l[key!]!);
  }
  m = /^([^=!\s]+)\s*(==|=|!=)\s*(\S*)$/.exec(t);
  if (m) {
    const [, key, op, val] = m;
    return op === "!=" ? (l) => l[key!] !== val : (l) => l[key!] === val;
  }
  if (/^![^=!\s]+$/.test(t)) return (l) => !(t.slice(1) in l);
  if (/^[^=!\s()]+$/.test(t)) return (l) => t in l;
  throw new SelectorError(`unable to parse requirement: "${t}"`);
}

export function parseLabelSelector(s: string | null): (o: Obj) => boolean {
  const terms = splitTop(s ?? "").map(labelTerm);
  return (o) => terms.every((f) => f((o.metadata?.labels ?? {}) as Record<string, string>));
}

function fieldValue(o: Obj, path: string): string {
  let cur: any = o;
  for (const p of path.split(".")) cur = cur?.[p];
  return cur === undefined || cur === null ? "" : String(cur);
}

export function parseFieldSelector(s: string | null): (o: Obj) => boolean {
  const terms = splitTop(s ?? "").map((t) => {
    const m = /^([^=!]+)(==|=|!=)(.*)$/.exec(t);
    if (!m) throw new SelectorError(`invalid selector: '${s}'; can't understand '${t}'`);
    const [, key, op, val] = m;
    return op === "!=" ? (o: Obj) => fieldValue(o, key!) !== val : (o: Obj) => fieldValue(o, key!) === val;
  });
  return (o) => terms.every((f) => f(o));
}
