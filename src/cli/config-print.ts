// `bunlet config print [kubelet flags] [--output yaml|json]`: the effective KubeletConfiguration
// after defaults, the --config file and flags — what /configz will serve — without starting anything.
import { defineCommand } from "citty";
import { renderConfig } from "../config/load.ts";
import { loadKubeletConfig } from "./load-config.ts";
import { log } from "../log.ts";

export type ConfigOutput = "yaml" | "json";

export class OutputFlagError extends Error {
  override name = "OutputFlagError";
}

/**
 * Separates our --output/-o (with "=value" or a following value) from the kubelet flags, which
 * go to the kubelet flag parser untouched.
 */
export function splitOutputFlag(argv: readonly string[]): { output: ConfigOutput; rest: string[] } {
  let output: string = "yaml";
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const m = /^(?:--output|-o)(?:=(.*))?$/.exec(a);
    if (!m) {
      rest.push(a);
      continue;
    }
    if (m[1] !== undefined) output = m[1];
    else if (i + 1 < argv.length) output = argv[++i]!;
    else throw new OutputFlagError(`flag needs an argument: ${a} (yaml or json)`);
  }
  if (output !== "yaml" && output !== "json") {
    throw new OutputFlagError(`invalid argument ${JSON.stringify(output)} for "--output" flag: must be yaml or json`);
  }
  return { output, rest };
}

/** Prints the effective configuration. Throws ConfigError (or OutputFlagError) on bad input. */
export async function printConfig(argv: readonly string[], write: (s: string) => void = (s) => process.stdout.write(s)): Promise<void> {
  const { output, rest } = splitOutputFlag(argv);
  const loaded = await loadKubeletConfig(rest);
  for (const w of new Set(loaded.warnings)) log.warn(w);
  const text = renderConfig(loaded.config, output);
  write(text.endsWith("\n") ? text : `${text}\n`);
}

const printCommand = defineCommand({
  meta: {
    name: "print",
    description: "Print the effective KubeletConfiguration (defaults < --config file < flags); accepts every kubelet flag (see bunlet --help)",
  },
  args: {
    output: { type: "enum", alias: "o", options: ["yaml", "json"], default: "yaml", description: "Output format" },
  },
  async run({ rawArgs }) {
    await printConfig(rawArgs);
  },
});

export const configCommand = defineCommand({
  meta: { name: "config", description: "Inspect the kubelet configuration (config print)" },
  subCommands: { print: printCommand },
});

export default configCommand;
