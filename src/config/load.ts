// loadConfig: defaults < --config file < --config-dir drop-ins < flags, as the kubelet builds its configuration
// (cmd/kubelet/app/server.go): the file is decoded and defaulted, then the command line is
// applied over it field by field. Map flags replace the whole map on their first use (cliflag
// discards what the map held), except --feature-gates, whose gates are merged over the file's.
// Everything is validated before anything starts.
import { ConfigError, showValue } from "./errors.ts";
import { applyDropin, listDropins, readDropin } from "./dropin.ts";
import { readKubeletConfigFile } from "./file.ts";
import type { NodeFlags } from "./flag-spec.ts";
import { type FlagAssignment, parseArgs } from "./flags.ts";
import { applyDefaults } from "./defaults.ts";
import { ACTED_ON_FIELDS, ACTED_ON_SUBFIELDS } from "./acted-on.ts";
import { FIELD_GO_KIND, type KubeletConfiguration, type KubeletConfigurationField, type KubeletConfigurationInput } from "./kubelet-config.ts";
import { assertValidConfiguration, type FieldSources } from "./validate.ts";
import { parseDuration } from "./duration.ts";

export { configz, renderConfig } from "./configz.ts";
export type { NodeFlags } from "./flag-spec.ts";
export type { KubeletConfiguration } from "./kubelet-config.ts";

export interface LoadedConfig {
  config: KubeletConfiguration;
  flags: NodeFlags;
  /** Human-readable notices: lenient decoding, deprecated flags, settings bunlet ignores. */
  warnings: string[];
  /** Absolute path of the --config file, when one was given. */
  configFile?: string;
  /** Where each top-level field (or flag-only setting) came from: file path or "--flag". */
  sources: FieldSources;
}

/**
 * Builds the effective configuration from kubelet argv. Throws ConfigError. The eviction maps are
 * parsed one layer up, by cli/load-config.ts loadKubeletConfig (eviction/ sits above config/).
 */
export async function loadConfig(argv: readonly string[]): Promise<LoadedConfig> {
  const { assignments, warnings } = parseArgs(argv);
  const sources: FieldSources = {};
  const configArg = [...assignments].reverse().find((a) => a.spec.name === "config");

  let input: KubeletConfigurationInput = {};
  let configFile: string | undefined;
  const fileWarnings: string[] = [];
  if (configArg && configArg.raw !== "") {
    const decoded = await readKubeletConfigFile(configArg.raw);
    configFile = decoded.path;
    input = decoded.input;
    fileWarnings.push(...decoded.warnings);
    for (const k of decoded.keysSet) sources[k] = decoded.path;
  }

  const config = applyDefaults(input);
  const layers: { input: KubeletConfigurationInput; path: string }[] = configFile ? [{ input, path: configFile }] : [];
  const dirArg = [...assignments].reverse().find((a) => a.spec.name === "config-dir");
  if (dirArg && dirArg.raw !== "") {
    for (const path of await listDropins(dirArg.raw)) {
      const decoded = await readDropin(path);
      applyDropin(config, decoded.input);
      fileWarnings.push(...decoded.warnings);
      for (const k of decoded.keysSet) sources[k] = path;
      layers.push({ input: decoded.input, path });
    }
  }
  const flags = defaultNodeFlags();
  const flagUse = applyFlags(config, flags, assignments, sources);
  if (!flagUse.has("v")) flags.v = config.logging.verbosity;
  flags.registerNode = config.registerNode;

  const ignored = notActedOnWarnings(layers, assignments);
  assertValidConfiguration(config, sources);
  validateNodeFlags(flags);

  return { config, flags, warnings: [...fileWarnings, ...warnings, ...ignored], configFile, sources };
}

export function defaultNodeFlags(): NodeFlags {
  return {
    rootDir: "/var/lib/kubelet",
    certDir: "/var/lib/kubelet/pki",
    exitOnLockContention: false,
    nodeLabels: {},
    v: 0,
    registerNode: true,
    experimentalAllocatableIgnoreEviction: false,
    unsafeLoopbackDebugHandlers: false,
    help: false,
  };
}

/** Applies flag assignments in command-line order. Returns the names of flags used. */
function applyFlags(config: KubeletConfiguration, flags: NodeFlags, assignments: FlagAssignment[], sources: FieldSources): Set<string> {
  const used = new Set<string>();
  const target = config as unknown as Record<string, unknown>;
  for (const { spec, value } of assignments) {
    const first = !used.has(spec.name);
    used.add(spec.name);
    if (spec.name === "config") continue;
    if (spec.name === "v") {
      flags.v = value as number;
      config.logging.verbosity = value as number;
      sources.v = "--v";
      continue;
    }
    if (spec.nodeFlag) {
      const nf = flags as unknown as Record<string, unknown>;
      // --node-labels accumulates across uses (cliflag.ConfigurationMap never resets).
      nf[spec.nodeFlag] = spec.kind === "configurationMap" ? { ...(nf[spec.nodeFlag] as object), ...(value as object) } : value;
      sources[spec.nodeFlag] = `--${spec.name}`;
      continue;
    }
    const path = spec.configField!;
    const top = path.split(".")[0]!;
    sources[top] = `--${spec.name}`;
    if (path !== top) sources[path] = `--${spec.name}`;
    const current = getPath(target, path);
    let next: unknown = value;
    switch (spec.kind) {
      case "mapStringBool":
        // The kubelet adds back the file's gates that the flag did not mention.
        next = { ...(current as object), ...(value as object) };
        break;
      case "mapStringString":
      case "mapLangle":
        next = first ? value : { ...(current as object), ...(value as object) };
        break;
      case "colonMultimap": {
        const base: Record<string, string[]> = first ? {} : structuredClone(current as Record<string, string[]>);
        for (const [k, vs] of Object.entries(value as Record<string, string[]>)) (base[k] ??= []).push(...vs);
        next = base;
        break;
      }
      case "stringSlice":
      case "taints":
        next = first ? value : [...(current as unknown[]), ...(value as unknown[])];
        break;
    }
    setPath(target, path, next);
  }
  return used;
}

function getPath(obj: Record<string, unknown>, path: string): unknown {
  return path.split(".").reduce<unknown>((o, k) => (o as Record<string, unknown> | undefined)?.[k], obj);
}

function setPath(obj: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split(".");
  let cur = obj;
  for (const k of keys.slice(0, -1)) cur = (cur[k] ??= {}) as Record<string, unknown>;
  cur[keys.at(-1)!] = value;
}

/**
 * "Zero" in Go's sense (and "0s", "0"): a value the kubelet treats as unset, so writing it
 * asks for nothing and earns no warning. kubeadm writes many such placeholders.
 */
function isUnsetLike(v: unknown): boolean {
  if (v === undefined || v === null || v === "" || v === 0 || v === false || v === "0") return true;
  if (typeof v === "string") {
    try {
      return parseDuration(v) === 0;
    } catch {
      return false;
    }
  }
  if (Array.isArray(v)) return v.length === 0;
  if (typeof v === "object") return Object.values(v).every(isUnsetLike);
  return false;
}

/** One warning per setting that was given (file or flag) but that bunlet does not act on yet. */
function notActedOnWarnings(layers: { input: KubeletConfigurationInput; path: string }[], assignments: FlagAssignment[]): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  const warn = (name: string, where: string) => {
    if (seen.has(name)) return;
    seen.add(name);
    out.push(`${name} is set (${where}) but bunlet does not act on it yet: accepted, type-checked and ignored`);
  };
  for (const { input, path: configFile } of layers) {
    for (const [k, v] of Object.entries(input) as [KubeletConfigurationField, unknown][]) {
      if (v === undefined || ACTED_ON_FIELDS.has(k)) continue;
      const acted = ACTED_ON_SUBFIELDS[k];
      if (acted && v && typeof v === "object") {
        const rest = Object.entries(v).filter(([sk, sv]) => !acted.includes(sk) && !isUnsetLike(sv));
        if (rest.length > 0) warn(`${k} (${rest.map(([sk]) => sk).join(", ")})`, `in ${configFile}`);
        continue;
      }
      // A pointer field is meaningful even at its zero value; others are not.
      if (FIELD_GO_KIND[k] !== "ptr" && isUnsetLike(v)) continue;
      warn(k, `in ${configFile}`);
    }
  }
  for (const { spec } of assignments) {
    if (spec.actedOn) continue;
    const name = spec.configField ?? spec.nodeFlag ?? spec.name;
    warn(spec.configField ? name.split(".")[0]! : `--${spec.name}`, `by --${spec.name}`);
  }
  return out;
}

function validateNodeFlags(flags: NodeFlags): void {
  for (const [k, v] of Object.entries(flags.nodeLabels)) {
    const problem = labelProblem(k, v);
    if (problem) {
      throw new ConfigError(`invalid node labels: --node-labels ${showValue(`${k}=${v}`)}: ${problem}`, {
        source: "--node-labels",
        field: "nodeLabels",
        value: `${k}=${v}`,
      });
    }
  }
  const restricted = Object.keys(flags.nodeLabels)
    .filter((k) => !isAllowedKubeletLabel(k))
    .sort();
  if (restricted.length > 0) {
    throw new ConfigError(
      `unknown 'kubernetes.io' or 'k8s.io' labels specified with --node-labels: [${restricted.join(" ")}]\n` +
        `--node-labels in the 'kubernetes.io' namespace must begin with an allowed prefix (${KUBELET_LABEL_NAMESPACES.join(", ")}) or be in the specifically allowed set (${KUBELET_LABELS.join(", ")})`,
      { source: "--node-labels", field: "nodeLabels", value: restricted[0] },
    );
  }
}

// pkg/kubelet/apis/well_known_labels.go: labels a kubelet may set on its own Node.
const KUBELET_LABEL_NAMESPACES = ["kubelet.kubernetes.io", "node.kubernetes.io"];
const KUBELET_LABELS = [
  "kubernetes.io/hostname",
  "topology.kubernetes.io/zone",
  "topology.kubernetes.io/region",
  "failure-domain.beta.kubernetes.io/zone",
  "failure-domain.beta.kubernetes.io/region",
  "beta.kubernetes.io/instance-type",
  "node.kubernetes.io/instance-type",
  "kubernetes.io/os",
  "kubernetes.io/arch",
  "beta.kubernetes.io/os",
  "beta.kubernetes.io/arch",
];

/** cmd/kubelet/app/options: kubernetes.io/k8s.io-namespaced labels must be in the allowed set. */
export function isAllowedKubeletLabel(key: string): boolean {
  const slash = key.indexOf("/");
  if (slash < 0) return true;
  const ns = key.slice(0, slash);
  const restrictedNs = ns === "kubernetes.io" || ns.endsWith(".kubernetes.io") || ns === "k8s.io" || ns.endsWith(".k8s.io");
  if (!restrictedNs) return true;
  if (KUBELET_LABEL_NAMESPACES.some((p) => ns === p || ns.endsWith(`.${p}`))) return true;
  return KUBELET_LABELS.includes(key);
}

const NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** apimachinery label key/value syntax (IsQualifiedName / IsValidLabelValue). */
export function labelProblem(key: string, value: string): string | undefined {
  const slash = key.lastIndexOf("/");
  const prefix = slash >= 0 ? key.slice(0, slash) : undefined;
  const name = slash >= 0 ? key.slice(slash + 1) : key;
  if (prefix !== undefined && (prefix.length === 0 || prefix.length > 253 || !DNS_SUBDOMAIN.test(prefix))) {
    return `label key prefix ${showValue(prefix)} must be a DNS subdomain (lowercase alphanumerics, '-' and '.')`;
  }
  if (name.length === 0 || name.length > 63 || !NAME.test(name)) {
    return `label key name ${showValue(name)} must be 1-63 alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric`;
  }
  if (value.length > 63 || (value !== "" && !NAME.test(value))) {
    return `label value ${showValue(value)} must be empty or 1-63 alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric`;
  }
  return undefined;
}
