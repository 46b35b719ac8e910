// Host commands the volume code runs (upstream k8s.io/utils/exec, CombinedOutput): blkid, mkfs, fsck,
// mount and losetup run as child processes the agent awaits (Bun.spawn), never blocking the event
// loop; a command is killed once it has run for EXEC_TIMEOUT_MS (a format of a large disk takes a while).

/** A command's exit status and its output (stdout and stderr together, as CombinedOutput). */
export interface ExecResult {
  status: number | null;
  output: string;
  /** The command could not be started (ENOENT: not installed). */
  error?: Error;
}
export type Exec = (cmd: string, args: string[]) => Promise<ExecResult>;

/** How long a device command may run before it is killed. */
const EXEC_TIMEOUT_MS = 10 * 60_000;

/** Runs a command on the host; resolves when it exits (killed after EXEC_TIMEOUT_MS). */
export async function execCommand(cmd: string, args: string[]): Promise<ExecResult> {
  let p: Bun.Subprocess<"ignore", "pipe", "pipe">;
  try {
    p = Bun.spawn([cmd, ...args], { stdin: "ignore", stdout: "pipe", stderr: "pipe", timeout: EXEC_TIMEOUT_MS });
  } catch (e) {
    return { status: null, output: "", error: e as Error };
  }
  const [out, err, status] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { status: p.signalCode ? null : status, output: `${out}${err}` };
}

/** A failed command's words: its start error, its output, or its exit status. */
export const execFailure = (r: ExecResult) => (r.error?.message ?? r.output).trim() || `exit ${r.status ?? "signal"}`;
