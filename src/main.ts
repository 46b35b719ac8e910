// bunlet's entry point (the compiled binary's main module).
import { isSupportedArch, UnsupportedArchError } from "../ffi/arch.ts";
import { runsAgent } from "./cli/dispatch.ts";
import { applyRuntimeEnv } from "./runtime-env.ts";

// The libc bindings know the struct layouts of x64 and arm64 only: on any other architecture, say so
// and stop before anything reads a kernel struct with a guessed layout.
if (!isSupportedArch(process.arch)) {
  console.error(new UnsupportedArchError(process.arch).message);
  process.exit(1);
}

// Bun's idle tuning is read from the environment at process start: the agent re-executes with it,
// once (the short-lived subcommands, help and version do not pay the ~20 ms of a second start).
if (runsAgent(process.argv.slice(2))) applyRuntimeEnv();
// Debug only (BUNLET_DEBUG_MEMORY=1): SIGUSR2 writes where the agent's memory is to stderr.
if (process.env.BUNLET_DEBUG_MEMORY === "1") (await import("./memory-report.ts")).installMemoryReport();

// citty decides on colours when it is first imported, from the environment only: keep escape
// codes out of pipes and log files. (Hence the dynamic import below, after this line runs.)
if (!process.stdout.isTTY && process.env.NO_COLOR === undefined) process.env.NO_COLOR = "1";

const { main } = await import("./cli/main.ts");
const code = await main(process.argv.slice(2));
// Exit explicitly: nothing the agent started may keep the process alive past its shutdown.
process.exit(code);
