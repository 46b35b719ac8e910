// Command-line value syntax of the kubelet's flags: pflag scalars (strconv.ParseBool,
// ParseInt base 0, ParseFloat) and component-base cliflag maps/lists. Each parser throws a
// SyntaxProblem whose text matches the Go one; flags.ts wraps it with the flag's name.

export class SyntaxProblem extends Error {
  override name = "SyntaxProblem";
}

const q = (s: string) => JSON.stringify(s);

/** strconv.ParseBool. */
export function parseGoBool(s: string): boolean {
  if (["1", "t", "T", "TRUE", "true", "True"].includes(s)) return true;
  if (["0", "f", "F", "FALSE", "false", "False"].includes(s)) return false;
  throw new SyntaxProblem(`strconv.ParseBool: parsing ${q(s)}: invalid syntax`);
}

/** strconv.ParseInt(s, 0, bits): sign, 0x/0o/0b/0 prefixes, "_" digit separators. */
export function parseGoInt(s: string, bits: 32 | 64): number {
  const fn = "strconv.ParseInt";
  const m = /^([+-]?)(0[xX][0-9a-fA-F_]+|0[oO][0-7_]+|0[bB][01_]+|0[0-7_]*|[1-9][0-9_]*)$/.exec(s);
  if (!m) throw new SyntaxProblem(`${fn}: parsing ${q(s)}: invalid syntax`);
  const [, sign, body = ""] = m;
  let digits = body;
  let base = 10;
  if (/^0[xX]/.test(body)) [base, digits] = [16, body.slice(2)];
  else if (/^0[oO]/.test(body)) [base, digits] = [8, body.slice(2)];
  else if (/^0[bB]/.test(body)) [base, digits] = [2, body.slice(2)];
  else if (body.length > 1 && body[0] === "0") [base, digits] = [8, body.slice(1)];
  // Base 0 allows "_" after a digit or the base prefix, never doubled or trailing.
  if (/__|_$/.test(digits)) {
    throw new SyntaxProblem(`${fn}: parsing ${q(s)}: invalid syntax`);
  }
  digits = digits.replaceAll("_", "");
  if (digits === "") throw new SyntaxProblem(`${fn}: parsing ${q(s)}: invalid syntax`);
  let v = 0n;
  for (const ch of digits.toLowerCase()) v = v * BigInt(base) + BigInt(parseInt(ch, 16));
  if (sign === "-") v = -v;
  const max = bits === 32 ? 2n ** 31n - 1n : 2n ** 63n - 1n;
  const min = bits === 32 ? -(2n ** 31n) : -(2n ** 63n);
  if (v > max || v < min) throw new SyntaxProblem(`${fn}: parsing ${q(s)}: value out of range`);
  if (v > BigInt(Number.MAX_SAFE_INTEGER) || v < BigInt(Number.MIN_SAFE_INTEGER)) {
    throw new SyntaxProblem(`${fn}: parsing ${q(s)}: value out of range (bunlet keeps integers within ±2^53)`);
  }
  return Number(v);
}

/** strconv.ParseFloat(s, 64), decimal forms. */
export function parseGoFloat(s: string): number {
  if (!/^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/.test(s) && !/^[+-]?(inf|infinity|nan)$/i.test(s)) {
    throw new SyntaxProblem(`strconv.ParseFloat: parsing ${q(s)}: invalid syntax`);
  }
  return Number(s.replace(/^([+-]?)inf(inity)?$/i, "$1Infinity").replace(/^[+-]?nan$/i, "NaN"));
}

/**
 * cliflag MapStringString / LangleSeparatedMapStringString: "k=v,k2=v2" (or "k<v"). Pieces are
 * split at the first separator and trimmed; empty pieces are skipped; a repeated key keeps the
 * last value.
 */
export function parseKeyValueMap(value: string, sep: "=" | "<"): Record<string, string> {
  const out: Record<string, string> = {};
  for (const piece of value.split(",")) {
    if (piece.length === 0) continue;
    const i = piece.indexOf(sep);
    if (i < 0) throw new SyntaxProblem(`malformed pair, expect string${sep}string`);
    out[piece.slice(0, i).trim()] = piece.slice(i + 1).trim();
  }
  return out;
}

/** cliflag MapStringBool: "Gate=true,Other=false" (values as strconv.ParseBool). */
export function parseBoolMap(value: string): Record<string, boolean> {
  const out: Record<string, boolean> = {};
  for (const piece of value.split(",")) {
    if (piece.length === 0) continue;
    const i = piece.indexOf("=");
    if (i < 0) throw new SyntaxProblem("malformed pair, expect string=bool");
    const k = piece.slice(0, i).trim();
    const v = piece.slice(i + 1).trim();
    try {
      out[k] = parseGoBool(v);
    } catch (e) {
      throw new SyntaxProblem(`invalid value of ${k}=${v}, err: ${(e as Error).message}`);
    }
  }
  return out;
}

/** cliflag ColonSeparatedMultimapStringString: "a:hello,b:again" → {a:["hello"], b:["again"]}. */
export function parseColonMultimap(value: string, into: Record<string, string[]> = {}): Record<string, string[]> {
  for (const piece of value.split(",")) {
    if (piece.length === 0) continue;
    const i = piece.indexOf(":");
    if (i < 0) throw new SyntaxProblem("malformed pair, expect string:string");
    const k = piece.slice(0, i).trim();
    if (k === "") throw new SyntaxProblem(`empty key in pair ${q(piece)}`);
    (into[k] ??= []).push(piece.slice(i + 1).trim());
  }
  return into;
}

/** cliflag ConfigurationMap (--node-labels): "k=v,k2" (missing value → ""), never fails. */
export function parseConfigurationMap(value: string, into: Record<string, string> = {}): Record<string, string> {
  for (const piece of value.split(",")) {
    if (piece.length === 0) continue;
    const i = piece.indexOf("=");
    if (i < 0) into[piece.trim()] = "";
    else into[piece.slice(0, i).trim()] = piece.slice(i + 1).trim();
  }
  return into;
}

/** pflag StringSlice: one CSV record ("a,b", "\"x,y\",z"); "" is the empty list. */
export function parseStringSlice(value: string): string[] {
  if (value === "") return [];
  const out: string[] = [];
  let cur = "";
  let quoted = false;
  let fieldStart = true;
  for (let i = 0; i < value.length; i++) {
    const ch = value[i]!;
    if (quoted) {
      if (ch === '"' && value[i + 1] === '"') {
        cur += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else cur += ch;
    } else if (ch === '"' && fieldStart) {
      quoted = true;
      fieldStart = false;
    } else if (ch === ",") {
      out.push(cur);
      cur = "";
      fieldStart = true;
    } else {
      if (ch === '"') throw new SyntaxProblem(`parse error: bare " in non-quoted field in ${q(value)}`);
      cur += ch;
      fieldStart = false;
    }
  }
  if (quoted) throw new SyntaxProblem(`parse error: extraneous or missing " in quoted field in ${q(value)}`);
  out.push(cur);
  return out;
}

/** Taints as --register-with-taints takes them: "key=value:Effect,key2:Effect". */
export function parseTaints(value: string): { key: string; value?: string; effect: string }[] {
  const effects = ["NoSchedule", "PreferNoSchedule", "NoExecute"];
  return parseStringSlice(value).map((spec) => {
    const i = spec.lastIndexOf(":");
    if (i < 0) throw new SyntaxProblem(`invalid taint spec: ${spec}`);
    const effect = spec.slice(i + 1);
    if (!effects.includes(effect)) {
      throw new SyntaxProblem(`invalid taint effect: ${effect}, unsupported taint effect (want one of ${effects.join(", ")})`);
    }
    const kv = spec.slice(0, i);
    const j = kv.indexOf("=");
    const key = j < 0 ? kv : kv.slice(0, j);
    if (key === "") throw new SyntaxProblem(`invalid taint spec: ${spec}`);
    return j < 0 ? { key, effect } : { key, value: kv.slice(j + 1), effect };
  });
}

/** How pflag prints a map default: sorted "k<v" / "k=v" pairs joined by commas. */
export function formatMap(m: Record<string, string | boolean>, sep: "=" | "<"): string {
  return Object.keys(m)
    .sort()
    .map((k) => `${k}${sep}${m[k]}`)
    .join(",");
}
