// What the command line asks for, decided from argv alone (no import of citty or the flag table), so
// the entry point can tell the agent's run from the short-lived subcommands before loading anything.

/** Subcommands with the one-line description shown by `bunlet --help` (no import needed to list them). */
export const SUBCOMMANDS = {
  version: "Print the bunlet and Bun versions",
  config: "Inspect the effective kubelet configuration (config print)",
  debug: "Low-level diagnostics of kernel notifications (debug notify)",
  eviction: "Eviction manager tools: simulate a node, explain the live node's eviction state",
} as const;

export type SubcommandName = keyof typeof SUBCOMMANDS;

export const isHelp = (a: string) => a === "--help" || a === "-h" || a === "--help=true";
export const isVersion = (a: string) => a === "--version" || a === "--version=true" || a === "--version=raw";

/** True when argv (without the program name) starts the agent: `bunlet [kubelet flags]`, not a subcommand, help or version. */
export function runsAgent(argv: readonly string[]): boolean {
  const first = argv[0];
  if (first !== undefined && (Object.hasOwn(SUBCOMMANDS, first) || first === "help")) return false;
  return !argv.some((a) => isHelp(a) || isVersion(a));
}
