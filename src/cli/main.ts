// The `bunlet` command line. citty dispatches the subcommands and renders their help; the bare
// form `bunlet [kubelet flags]` is the kubelet itself, whose flags are parsed by src/config (pflag
// syntax and error texts), so it never goes through citty's parser.
import { defineCommand, renderUsage, runCommand, type CommandDef } from "citty";
import { ConfigError } from "../config/errors.ts";
import type { FlagSpec } from "../config/flag-spec.ts";
import { VERSION, versionInfo, renderVersion } from "./version.ts";
import { isHelp, isVersion, SUBCOMMANDS, type SubcommandName } from "./dispatch.ts";
// Heavier modules (the flag table, config loading) are imported only on the paths that use them:
// `bunlet version` and the agent's startup should not pay for each other.

const DESCRIPTION = "bunlet: a Kubernetes node agent (kubelet) on Bun";

export const rootCommand = defineCommand({
  meta: { name: "bunlet", version: VERSION, description: DESCRIPTION },
  subCommands: {
    version: () => import("./version.ts").then((m) => m.default),
    config: () => import("./config-print.ts").then((m) => m.configCommand),
    // Owned by other areas; imported only when used so the agent's startup does not pay for them.
    debug: () => import("./debug.ts").then((m) => m.default as CommandDef),
    eviction: () => import("./eviction.ts").then((m) => m.default as CommandDef),
  },
});

/** One pflag-style line per flag: `  -v, --v Level   description (default 0)`. */
export function renderFlags(flags: readonly FlagSpec[], configFlagDeprecation: string): string {
  const heads = flags.map((f) => {
    const short = f.shorthand ? `-${f.shorthand}, ` : "    ";
    return `  ${short}--${f.name}${f.type ? ` ${f.type}` : ""}`;
  });
  const width = Math.max(...heads.map((h) => h.length)) + 3;
  return flags
    .map((f, i) => {
      let line = heads[i]!.padEnd(width) + f.description;
      if (f.default !== undefined && f.default !== "") line += ` (default ${f.default})`;
      if (f.deprecated) {
        line += f.deprecated === configFlagDeprecation ? " (DEPRECATED: set it in the --config file)" : ` (DEPRECATED: ${f.deprecated})`;
      }
      if (!f.actedOn) line += " [accepted; bunlet does not act on it]";
      return line;
    })
    .join("\n");
}

export async function renderRootHelp(): Promise<string> {
  const { KUBELET_FLAGS } = await import("../config/flags.ts");
  const { CONFIG_FLAG_DEPRECATION } = await import("../config/config-flags.ts");
  const names = Object.keys(SUBCOMMANDS) as SubcommandName[];
  const w = Math.max(...names.map((n) => n.length)) + 3;
  return [
    `${DESCRIPTION} (v${VERSION})`,
    "",
    "The bunlet is a kubelet: run bare with the kubelet's flags (or a KubeletConfiguration file via",
    "--config) it runs pods from static manifests, serves the kubelet's HTTP endpoints and evicts",
    "pods under node pressure.",
    "",
    "Usage:",
    "  bunlet [flags]",
    "  bunlet <command> [options]",
    "",
    "Commands:",
    ...names.map((n) => `  ${n.padEnd(w)}${SUBCOMMANDS[n]}`),
    "",
    "Flags:",
    "  -h, --help   help for bunlet",
    renderFlags(KUBELET_FLAGS, CONFIG_FLAG_DEPRECATION),
    "",
    `Use "bunlet <command> --help" for more information about a command.`,
  ].join("\n");
}

/**
 * Finds the (sub)command an argv names, for its help text, with a stand-in parent named by the
 * whole path ("bunlet debug") so citty's usage line reads `bunlet debug notify`.
 */
async function resolveCommand(argv: readonly string[]): Promise<[CommandDef, CommandDef]> {
  let cmd: CommandDef = rootCommand;
  const path = ["bunlet"];
  let parentPath: string[] = [];
  for (const a of argv) {
    if (a.startsWith("-")) continue;
    const subs = typeof cmd.subCommands === "function" ? await cmd.subCommands() : await cmd.subCommands;
    const next = subs?.[a];
    if (!next) break;
    cmd = await (typeof next === "function" ? next() : next);
    parentPath = [...path];
    path.push(a);
  }
  return [cmd, { meta: { name: parentPath.join(" "), version: VERSION } }];
}

async function runSubcommand(argv: readonly string[], printError: (s: string) => void): Promise<number> {
  if (argv.some(isHelp)) {
    const [cmd, parent] = await resolveCommand(argv);
    console.log(`${await renderUsage(cmd, parent)}\n`);
    return 0;
  }
  try {
    process.exitCode = undefined;
    await runCommand(rootCommand, { rawArgs: [...argv] });
    return typeof process.exitCode === "number" ? process.exitCode : 0;
  } catch (err) {
    if (err instanceof ConfigError || (err instanceof Error && err.name === "OutputFlagError")) {
      printError(`error: ${err.message}`);
      return 1;
    }
    if (err instanceof Error && err.name === "CLIError") {
      const [cmd, parent] = await resolveCommand(argv);
      console.log(`${await renderUsage(cmd, parent)}\n`);
      printError(`error: ${err.message}`);
      return 1;
    }
    printError(`error: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  }
}

/** Entry point: dispatches argv (without the program name); resolves to the exit code. */
export async function main(argv: readonly string[], printError = (s: string) => process.stderr.write(`${s}\n`)): Promise<number> {
  const first = argv[0];
  if (first !== undefined && Object.hasOwn(SUBCOMMANDS, first)) return runSubcommand(argv, printError);
  if (first === "help") {
    if (argv.length === 1) {
      console.log(await renderRootHelp());
      return 0;
    }
    return runSubcommand([...argv.slice(1), "--help"], printError);
  }
  if (argv.some(isHelp)) {
    console.log(await renderRootHelp());
    return 0;
  }
  if (argv.some(isVersion)) {
    // kubelet --version prints "Kubernetes vX.Y.Z"; ours names the agent.
    console.log(argv.includes("--version=raw") ? renderVersion(versionInfo(), "json") : `bunlet v${VERSION}`);
    return 0;
  }
  const { runAgent } = await import("./run.ts");
  return runAgent(argv, { printError });
}
