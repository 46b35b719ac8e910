// Reading a KubeletConfiguration file as the kubelet does (cmd/kubelet/app/server.go
// loadConfigFile + kubeletconfig/util/codec): YAML or JSON, apiVersion/kind must name
// kubelet.config.k8s.io/v1beta1 KubeletConfiguration, strict decoding first and, when only
// unknown or duplicate fields made it fail, lenient decoding with a warning. Type errors are
// fatal. Relative paths in the file are resolved against the file's directory.
import { readFile, stat } from "node:fs/promises";
import { dirname, isAbsolute, resolve } from "node:path";
import { type Document, LineCounter, parseDocument, YAMLParseError } from "yaml";
import type { z } from "zod";
import { ConfigError, showValue } from "./errors.ts";
import { API_VERSION, KIND, kubeletConfigurationSchema, type KubeletConfigurationInput } from "./kubelet-config.ts";

export interface DecodedConfigFile {
  path: string;
  /** Type-checked content, unknown fields removed, relative paths resolved. */
  input: KubeletConfigurationInput;
  /** Top-level keys present (non-null) in the file, for "set in file" provenance. */
  keysSet: string[];
  warnings: string[];
}

/** Largest KubeletConfiguration file read: a hostile file (a link to /dev/zero) must not fill RAM. */
const MAX_CONFIG_FILE_BYTES = 1024 * 1024;

const fail = (path: string, detail: string, extra: { field?: string; value?: unknown } = {}) =>
  new ConfigError(`failed to load Kubelet config file ${path}, error: ${detail}`, { source: path, ...extra });

/** Reads and decodes a config file. Relative `path` is taken from the current directory. */
export async function readKubeletConfigFile(path: string): Promise<DecodedConfigFile> {
  const abs = resolve(path);
  let text: string;
  try {
    // Regular files of sane size only: a link to /dev/zero or a FIFO must be an error, not a hang.
    const st = await stat(abs);
    if (!st.isFile()) throw fail(abs, `read ${abs}: not a regular file`);
    if (st.size > MAX_CONFIG_FILE_BYTES) throw fail(abs, `read ${abs}: file is ${st.size} bytes, more than ${MAX_CONFIG_FILE_BYTES}`);
    text = await readFile(abs, "utf8");
  } catch (e) {
    if (e instanceof ConfigError) throw e;
    const err = e as NodeJS.ErrnoException;
    throw fail(abs, `read ${abs}: ${err.code === "ENOENT" ? "no such file or directory" : err.message}`);
  }
  return decodeKubeletConfig(text, abs);
}

/** Decodes config file text; `path` names it in messages and anchors relative paths. */
export function decodeKubeletConfig(text: string, path: string): DecodedConfigFile {
  const warnings: string[] = [];
  if (text.trim() === "") throw fail(path, "file was empty; want a KubeletConfiguration object");

  const { doc, lines } = parseYaml(text, path, warnings);
  let data: unknown;
  try {
    data = stripNulls(doc.toJS({ maxAliasCount: 100 }));
  } catch (e) {
    // e.g. a YAML alias bomb: the yaml package's resource-exhaustion guard (test/config/config-fuzz.test.ts).
    throw fail(path, `not valid YAML: ${(e as Error).message}`);
  }
  if (data === null || typeof data !== "object" || Array.isArray(data)) {
    throw fail(
      path,
      `the file holds a ${Array.isArray(data) ? "list" : typeof data}; want a KubeletConfiguration object (apiVersion: ${API_VERSION}, kind: ${KIND})`,
    );
  }
  const obj = data as Record<string, unknown>;
  checkTypeMeta(obj, path);

  let parsed = kubeletConfigurationSchema.safeParse(obj);
  if (!parsed.success) {
    const unknown = parsed.error.issues.filter((i) => i.code === "unrecognized_keys");
    const others = parsed.error.issues.filter((i) => i.code !== "unrecognized_keys");
    if (others.length > 0) throw typeError(others, obj, doc, lines, path);
    const names = unknown.flatMap((i) => (i as { keys: string[] }).keys.map((k) => fieldPath([...i.path, k])));
    warnings.push(
      `${path}: using lenient decoding as strict decoding failed: strict decoding error: ${names.map((n) => `unknown field ${JSON.stringify(n)}`).join(", ")} (ignored)`,
    );
    for (const issue of unknown) {
      const parent = getIn(obj, issue.path) as Record<string, unknown>;
      for (const k of (issue as { keys: string[] }).keys) delete parent[k];
    }
    parsed = kubeletConfigurationSchema.safeParse(obj);
    if (!parsed.success) throw typeError(parsed.error.issues, obj, doc, lines, path);
  }
  const input = parsed.data;
  resolveRelativePaths(input, dirname(path));
  return { path, input, keysSet: Object.keys(obj).filter((k) => k !== "apiVersion" && k !== "kind"), warnings };
}

function parseYaml(text: string, path: string, warnings: string[]): { doc: Document; lines: LineCounter } {
  // YAML 1.1 like the kubelet's yaml.v2-based decoder (yes/no/on/off are booleans there).
  const parse = (uniqueKeys: boolean) => {
    const lines = new LineCounter();
    const doc = parseDocument(text, { version: "1.1", uniqueKeys, lineCounter: lines, prettyErrors: false });
    return { doc, lines };
  };
  let res = parse(true);
  const dup = res.doc.errors.find((e) => e.code === "DUPLICATE_KEY");
  if (dup) {
    const line = res.lines.linePos(dup.pos[0]).line;
    warnings.push(
      `${path}: using lenient decoding as strict decoding failed: strict decoding error: line ${line}: ${dup.message.split("\n")[0]} (the last value wins)`,
    );
    res = parse(false);
  }
  const err = res.doc.errors[0];
  if (err) {
    const pos = res.lines.linePos(err.pos[0]);
    const msg = err instanceof YAMLParseError ? err.message.split("\n")[0] : String(err);
    throw fail(path, `yaml: line ${pos.line}, column ${pos.col}: ${msg}`);
  }
  return res;
}

function checkTypeMeta(obj: Record<string, unknown>, path: string): void {
  const { apiVersion, kind } = obj;
  if (kind === undefined || kind === "") {
    throw fail(path, `Object 'Kind' is missing; want kind: ${KIND} (with apiVersion: ${API_VERSION})`, { field: "kind" });
  }
  if (apiVersion === undefined || apiVersion === "") {
    throw fail(path, `Object 'apiVersion' is missing; want apiVersion: ${API_VERSION}`, { field: "apiVersion" });
  }
  if (apiVersion !== API_VERSION || kind !== KIND) {
    throw fail(path, `no kind ${showValue(kind)} is registered for version ${showValue(apiVersion)}: want apiVersion: ${API_VERSION} and kind: ${KIND}`, {
      field: apiVersion !== API_VERSION ? "apiVersion" : "kind",
      value: apiVersion !== API_VERSION ? apiVersion : kind,
    });
  }
}

function typeError(issues: z.core.$ZodIssue[], obj: Record<string, unknown>, doc: Document, lines: LineCounter, path: string): ConfigError {
  const parts = issues.map((i) => {
    const value = getIn(obj, i.path);
    const node = doc.getIn(i.path as (string | number)[], true) as { range?: [number, number, number] } | undefined;
    const at = node?.range ? ` (line ${lines.linePos(node.range[0]).line})` : "";
    return `field ${fieldPath(i.path)}${at}: invalid value ${showValue(value)}: ${i.message}`;
  });
  const first = issues[0]!;
  return fail(path, parts.join("; "), { field: fieldPath(first.path), value: getIn(obj, first.path) });
}

/** "authentication.webhook.cacheTTL", "evictionHard[\"memory.available\"]", "registerWithTaints[0].effect". */
export function fieldPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const seg of path) {
    if (typeof seg === "number") out += `[${seg}]`;
    else if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(String(seg))) out += out === "" ? String(seg) : `.${String(seg)}`;
    else out += `[${JSON.stringify(String(seg))}]`;
  }
  return out;
}

function getIn(obj: unknown, path: readonly PropertyKey[]): unknown {
  let cur = obj;
  for (const seg of path) {
    if (cur === null || typeof cur !== "object") return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[seg];
  }
  return cur;
}

/** JSON null leaves a Go field at its zero value: treat it as absent. */
function stripNulls(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(stripNulls);
  if (v !== null && typeof v === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) if (x !== null && x !== undefined) out[k] = stripNulls(x);
    return out;
  }
  return v;
}

/** kubeletconfig's path refs: relative paths in the file are relative to the file. */
function resolveRelativePaths(c: KubeletConfigurationInput, base: string): void {
  const fix = (p: string) => (p !== "" && !isAbsolute(p) ? resolve(base, p) : p);
  for (const k of ["staticPodPath", "tlsCertFile", "tlsPrivateKeyFile", "resolvConf"] as const) {
    const v = c[k];
    if (v !== undefined) c[k] = fix(v);
  }
  const x509 = c.authentication?.x509;
  if (x509?.clientCAFile !== undefined) x509.clientCAFile = fix(x509.clientCAFile);
}
