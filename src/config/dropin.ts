// --config-dir drop-ins (KEP-3983), as cmd/kubelet/app/server.go mergeKubeletConfigurations does:
// every "*.conf" file under the directory (walked depth-first in lexical order) is a
// KubeletConfiguration applied as a JSON merge patch (RFC 7386) over the already-defaulted
// config: objects merge key by key, lists and scalars replace. Note what follows from that:
// a drop-in's evictionHard is merged into the default thresholds, not substituted for them.
import { readdir, readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { canonicalDuration } from "./duration.ts";
import { ConfigError } from "./errors.ts";
import { type DecodedConfigFile, decodeKubeletConfig } from "./file.ts";
import { DURATION_FIELDS, type KubeletConfiguration, type KubeletConfigurationInput } from "./kubelet-config.ts";

/** Lists drop-in files in the order the kubelet applies them. */
export async function listDropins(dir: string): Promise<string[]> {
  const root = resolve(dir);
  const out: string[] = [];
  const walk = async (d: string) => {
    let entries;
    try {
      entries = await readdir(d, { withFileTypes: true });
    } catch (e) {
      const err = e as NodeJS.ErrnoException;
      throw new ConfigError(`failed to read drop-in directory ${d} (--config-dir): ${err.code === "ENOENT" ? "no such file or directory" : err.message}`, {
        source: "--config-dir",
        value: dir,
      });
    }
    for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      const p = join(d, e.name);
      if (e.isDirectory()) await walk(p);
      else if (e.name.endsWith(".conf")) out.push(p);
    }
  };
  await walk(root);
  return out;
}

/** Reads and type-checks one drop-in file (same rules as the --config file). */
export async function readDropin(path: string): Promise<DecodedConfigFile> {
  const text = await readFile(path, "utf8");
  if (text.trim() === "") return { path, input: {}, keysSet: [], warnings: [] };
  return decodeKubeletConfig(text, path);
}

/** Applies a decoded drop-in over the configuration, in place. */
export function applyDropin(config: KubeletConfiguration, input: KubeletConfigurationInput): void {
  const patch = structuredClone(input) as Record<string, unknown>;
  delete patch.apiVersion;
  delete patch.kind;
  canonicalizeDurations(patch);
  mergePatch(config as unknown as Record<string, unknown>, patch);
}

function mergePatch(target: Record<string, unknown>, patch: Record<string, unknown>): void {
  for (const [k, v] of Object.entries(patch)) {
    if (v === undefined) continue;
    const cur = target[k];
    if (isPlainObject(v) && isPlainObject(cur)) mergePatch(cur, v);
    else target[k] = v;
  }
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

function canonicalizeDurations(p: Record<string, unknown>): void {
  for (const k of DURATION_FIELDS) if (typeof p[k] === "string") p[k] = canonicalDuration(p[k] as string);
  const nested: [string, string][] = [
    ["authentication.webhook", "cacheTTL"],
    ["authorization.webhook", "cacheAuthorizedTTL"],
    ["authorization.webhook", "cacheUnauthorizedTTL"],
    ["crashLoopBackOff", "maxContainerRestartPeriod"],
    ["logging", "flushFrequency"],
  ];
  for (const [path, key] of nested) {
    const obj = path.split(".").reduce<unknown>((o, s) => (isPlainObject(o) ? o[s] : undefined), p);
    if (isPlainObject(obj) && typeof obj[key] === "string") obj[key] = canonicalDuration(obj[key] as string);
  }
}
