// The kubelet's command line: every flag bunlet accepts (node-flags.ts, config-flags.ts) in the
// order `--help` lists them, and a pflag-compatible parser over argv. citty only dispatches
// subcommands; every kubelet flag is parsed here so syntax and error texts match the kubelet's
// (`unknown flag: --foo`, `flag needs an argument: --port`, `invalid argument "x" for "--port" flag: …`).
import { isIP } from "node:net";
import { CONFIG_FLAG_SPECS } from "./config-flags.ts";
import { canonicalDuration } from "./duration.ts";
import { ConfigError } from "./errors.ts";
import type { FlagKind, FlagSpec } from "./flag-spec.ts";
import { durationProblem } from "./go-types.ts";
import { NODE_FLAG_SPECS } from "./node-flags.ts";
import {
  parseBoolMap,
  parseColonMultimap,
  parseConfigurationMap,
  parseGoBool,
  parseGoFloat,
  parseGoInt,
  parseKeyValueMap,
  parseStringSlice,
  parseTaints,
  SyntaxProblem,
} from "./syntax.ts";

/** Every flag bunlet accepts, in the order `--help` lists them (sorted by name, as pflag sorts). */
export const KUBELET_FLAGS: readonly FlagSpec[] = [...NODE_FLAG_SPECS, ...CONFIG_FLAG_SPECS].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));

const BY_NAME = new Map(KUBELET_FLAGS.map((f) => [f.name, f]));
const BY_SHORTHAND = new Map(KUBELET_FLAGS.filter((f) => f.shorthand).map((f) => [f.shorthand!, f]));

/** The flag spec for a name ("eviction-hard" or "eviction_hard"), if bunlet knows it. */
export function findFlag(name: string): FlagSpec | undefined {
  return BY_NAME.get(normalizeFlagName(name));
}

/** cliflag.WordSepNormalizeFunc: "_" and "-" are interchangeable in flag names. */
export const normalizeFlagName = (name: string) => name.replaceAll("_", "-");

/** One flag occurrence on the command line, its value already converted. */
export interface FlagAssignment {
  spec: FlagSpec;
  /** The argument as typed, for messages. */
  arg: string;
  raw: string;
  value: unknown;
}

export interface ParsedArgs {
  assignments: FlagAssignment[];
  /** pflag's deprecation notices for deprecated flags that were used. */
  warnings: string[];
}

/** Parses kubelet argv (without the program name) the way pflag does. Throws ConfigError. */
export function parseArgs(argv: readonly string[]): ParsedArgs {
  const assignments: FlagAssignment[] = [];
  const warnings: string[] = [];
  const positional: string[] = [];
  const add = (spec: FlagSpec, raw: string, arg: string) => {
    assignments.push({ spec, arg, raw, value: convertFlagValue(spec, raw) });
    if (spec.deprecated && !warnings.some((w) => w.startsWith(`Flag --${spec.name} `))) {
      warnings.push(`Flag --${spec.name} has been deprecated, ${spec.deprecated}`);
    }
  };
  const noOptValue = (spec: FlagSpec) => (spec.kind === "bool" ? "true" : spec.kind === "version" ? "true" : undefined);

  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--") {
      positional.push(...argv.slice(i + 1));
      break;
    }
    if (arg.startsWith("--") && arg.length > 2) {
      const body = arg.slice(2);
      const eq = body.indexOf("=");
      const name = normalizeFlagName(eq < 0 ? body : body.slice(0, eq));
      if (name.startsWith("-") || name.startsWith("=")) {
        throw new ConfigError(`bad flag syntax: ${arg}`, { source: arg });
      }
      const spec = BY_NAME.get(name);
      if (!spec) throw new ConfigError(`unknown flag: --${name}`, { source: arg });
      if (eq >= 0) add(spec, body.slice(eq + 1), arg);
      else if (noOptValue(spec) !== undefined) add(spec, noOptValue(spec)!, arg);
      else if (i + 1 < argv.length) add(spec, argv[++i]!, `${arg} ${argv[i]}`);
      else throw new ConfigError(`flag needs an argument: --${name}`, { source: arg });
      continue;
    }
    if (arg.startsWith("-") && arg.length > 1) {
      // Shorthands: -v=4, -v 4, -v4, -h.
      const c = arg[1]!;
      const spec = BY_SHORTHAND.get(c);
      if (!spec) throw new ConfigError(`unknown shorthand flag: '${c}' in ${arg}`, { source: arg });
      const rest = arg.slice(2);
      if (rest.startsWith("=")) add(spec, rest.slice(1), arg);
      else if (noOptValue(spec) !== undefined) {
        if (rest !== "") throw new ConfigError(`unknown shorthand flag: '${rest[0]}' in ${arg}`, { source: arg });
        add(spec, noOptValue(spec)!, arg);
      } else if (rest !== "") add(spec, rest, arg);
      else if (i + 1 < argv.length) add(spec, argv[++i]!, `${arg} ${argv[i]}`);
      else throw new ConfigError(`flag needs an argument: '${c}' in -${c}`, { source: arg });
      continue;
    }
    positional.push(arg);
  }
  if (positional.length > 0) {
    // The kubelet takes no arguments (cmd/kubelet/app/server.go).
    throw new ConfigError(`unknown command ${positional[0]}`, { source: positional[0] });
  }
  return { assignments, warnings };
}

/** Converts one flag value to its typed form; the error names the flag as pflag does. */
export function convertFlagValue(spec: FlagSpec, raw: string): unknown {
  try {
    return convert(spec.kind, raw);
  } catch (e) {
    if (!(e instanceof SyntaxProblem)) throw e;
    throw new ConfigError(`invalid argument ${JSON.stringify(raw)} for "--${spec.name}" flag: ${e.message}`, {
      source: `--${spec.name}`,
      field: spec.configField,
      value: raw,
    });
  }
}

function convert(kind: FlagKind, raw: string): unknown {
  switch (kind) {
    case "string":
    case "version":
      return raw;
    case "bool":
      return parseGoBool(raw);
    case "int32":
      return parseGoInt(raw, 32);
    case "int64":
      return parseGoInt(raw, 64);
    case "float64":
      return parseGoFloat(raw);
    case "level": {
      const v = parseGoInt(raw, 32);
      if (v < 0) throw new SyntaxProblem(`verbosity must be a non-negative integer, got ${v}`);
      return v;
    }
    case "duration": {
      const problem = durationProblem(raw);
      if (problem) throw new SyntaxProblem(problem);
      return canonicalDuration(raw);
    }
    case "ip":
      // utilflag.IPVar accepts any IP; netutils.ParseIPSloppy also allows leading zeros in IPv4.
      if (isIP(raw) === 0 && isIP(raw.replace(/(^|\.)0+(\d)/g, "$1$2")) === 0) {
        throw new SyntaxProblem(`${JSON.stringify(raw)} is not a valid IP address`);
      }
      return raw;
    case "mapStringString":
      return parseKeyValueMap(raw, "=");
    case "mapLangle":
      return parseKeyValueMap(raw, "<");
    case "mapStringBool":
      return parseBoolMap(raw);
    case "colonMultimap":
      return parseColonMultimap(raw);
    case "configurationMap":
      return parseConfigurationMap(raw);
    case "stringSlice":
      return parseStringSlice(raw);
    case "taints":
      return parseTaints(raw);
    case "vmodule":
      return parseVModule(raw);
  }
}

/** klog's --vmodule: "pattern=N,pattern2=M". */
function parseVModule(raw: string): { filePattern: string; verbosity: number }[] {
  if (raw === "") return [];
  return raw.split(",").map((piece) => {
    const i = piece.indexOf("=");
    if (i <= 0) throw new SyntaxProblem(`${JSON.stringify(piece)} does not have the pattern=N format`);
    const n = Number(piece.slice(i + 1));
    if (!Number.isInteger(n) || n < 0) throw new SyntaxProblem(`parsing verbosity in ${JSON.stringify(piece)}: want a non-negative integer`);
    return { filePattern: piece.slice(0, i), verbosity: n };
  });
}
