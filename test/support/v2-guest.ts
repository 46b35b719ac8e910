// Runs commands inside the cgroup v2 User-mode Linux guest (scripts/host/v2-guest.sh) from a test.
// The guest's kernel is built once by scripts/host/uml-kernel.sh (setup.sh v2-guest; CI runs it):
// without it the guest tests skip with that reason on a developer machine, and fail under CI.
import { existsSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";

export const REPO = resolve(import.meta.dir, "../..");
const GUEST_SCRIPT = join(REPO, "scripts/host/v2-guest.sh");

/** Why the guest cannot run here (undefined: it can). Never builds the kernel. */
export function v2GuestUnavailable(): string | undefined {
  if (process.platform !== "linux") return "the v2 guest is a Linux (UML) guest";
  if (process.getuid?.() !== 0) return "the v2 guest tests run as root (the guest sees the host's / read-only)";
  if (process.env.BUNLET_UML_KERNEL)
    return existsSync(process.env.BUNLET_UML_KERNEL) ? undefined : `BUNLET_UML_KERNEL=${process.env.BUNLET_UML_KERNEL} does not exist`;
  const r = Bun.spawnSync(["bash", join(REPO, "scripts/host/uml-kernel.sh"), "--path"], { stdout: "pipe", stderr: "pipe" });
  if (r.exitCode === 0) return undefined;
  return `no UML kernel built yet (${r.stdout.toString().trim() || "uml-kernel.sh --path failed"}): run scripts/host/setup.sh v2-guest once (~6 min on 2 CPUs)`;
}

/** Skip reason for a guest test file; under CI a missing guest is a failure, not a skip. */
export function v2GuestSkipReason(): string | undefined {
  const why = v2GuestUnavailable();
  if (why && process.env.CI) throw new Error(`v2 guest tests cannot run under CI: ${why}`);
  if (why) console.warn(`skipping cgroup v2 guest tests: ${why}`);
  return why;
}

export interface GuestRun {
  exitCode: number;
  stdout: string;
  stderr: string;
  /**
   * Set when v2-guest.sh's watchdog found the guest frozen (no heartbeat, no output for the stall
   * limit) and killed it: its message, "v2 guest stalled: no progress for N s during: <last line>".
   */
  stalled?: string;
}

/** v2-guest.sh's exit code for a guest its stall watchdog killed. */
export const GUEST_STALLED_EXIT = 123;

/** Pure: the stall message in v2-guest.sh's stderr when it exited GUEST_STALLED_EXIT, else undefined. */
export function guestStallMessage(exitCode: number, stderr: string): string | undefined {
  if (exitCode !== GUEST_STALLED_EXIT) return undefined;
  const lines = stderr.split("\n").filter((l) => l.startsWith("v2-guest: v2 guest stalled: "));
  return lines.at(-1)?.slice("v2-guest: ".length) ?? "v2 guest stalled (v2-guest.sh exit 123)";
}

export interface GuestOptions {
  systemd?: boolean;
  cgroupV1?: boolean;
  memoryMiB?: number;
  timeoutS?: number;
  /** v2-guest.sh -s: seconds without guest heartbeat or output that count as a frozen guest (default 120) */
  stallS?: number;
  /** A sparse host file of this size as the guest's /dev/ubda (v2-guest.sh -d; e.g. for swap), removed afterwards. */
  diskMiB?: number;
  env?: string[];
}

/**
 * Pure: v2-guest.sh's snapshot of a stalled run's host processes (the lines from its "this run's host
 * processes" header up to the guest console dump), or "" when there is none.
 */
export function guestStallSnapshot(stderr: string): string {
  const at = stderr.search(/^v2-guest: v2 guest stalled: .* this run's host processes/m);
  if (at < 0) return "";
  const rest = stderr.slice(at);
  const end = rest.indexOf("\n---- guest console");
  return end < 0 ? rest : rest.slice(0, end);
}

/** Runs `cmd` in a fresh guest; resolves with its exit code and output (never rejects on a non-zero exit). */
export async function runInV2Guest(
  cmd: string[],
  opts: GuestOptions & { /** host dirs shared read-write at their path (-w) */ rw?: string[] } = {},
): Promise<GuestRun> {
  const args = [GUEST_SCRIPT];
  if (opts.systemd) args.push("--systemd");
  if (opts.cgroupV1) args.push("--cgroup-v1");
  if (opts.memoryMiB) args.push("-m", String(opts.memoryMiB));
  args.push("-t", String(opts.timeoutS ?? 240));
  if (opts.stallS) args.push("-s", String(opts.stallS));
  for (const e of opts.env ?? []) args.push("-e", e);
  for (const d of opts.rw ?? []) args.push("-w", d);
  const diskDir = opts.diskMiB ? mkdtempSync("/var/tmp/bunlet-guest-disk-") : undefined;
  if (diskDir) {
    writeFileSync(join(diskDir, "disk"), "");
    truncateSync(join(diskDir, "disk"), opts.diskMiB! * 2 ** 20);
    args.push("-d", join(diskDir, "disk"));
  }
  // The guest's /tmp, /run and /dev/shm are fresh tmpfs: a checkout under them (a CI clone in /tmp)
  // would be invisible there, so it is shared at its own path.
  if (/^\/(tmp|run|dev\/shm)(\/|$)/.test(REPO)) args.push("-w", REPO);
  args.push("--", ...cmd);
  const child = Bun.spawn(["bash", ...args], { cwd: REPO, stdout: "pipe", stderr: "pipe", stdin: "ignore" });
  const [stdout, stderr, exitCode] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]).finally(
    () => diskDir && rmSync(diskDir, { recursive: true, force: true }),
  );
  const stalled = guestStallMessage(exitCode, stderr);
  return stalled ? { exitCode, stdout, stderr, stalled } : { exitCode, stdout, stderr };
}

/**
 * `cmd` run inside the guest (cwd = the repo, seen through the guest's overlay root) after
 * /var/lib/bunlet (test containerd roots) gets a tmpfs: containerd's overlayfs snapshotter cannot put
 * its layers on the guest's overlay root.
 */
export function withBunletTmpfs(cmd: string[]): string[] {
  const prepare = 'mkdir -p /var/lib/bunlet && mount -t tmpfs -o mode=755 tmpfs /var/lib/bunlet && exec "$@"';
  return ["bash", "-c", prepare, "guest", ...cmd];
}

/** bun (this one) with `argv` inside the guest (withBunletTmpfs). */
export function bunInGuestCommand(argv: string[]): string[] {
  return withBunletTmpfs([process.execPath, ...argv]);
}

/** Runs `bun test <file>` inside the guest (bunInGuestCommand). */
export async function bunTestInV2Guest(file: string, opts: GuestOptions = {}): Promise<GuestRun> {
  return runInV2Guest(bunInGuestCommand(["test", "--timeout", "120000", file]), { ...opts, env: ["BUNLET_IN_V2_GUEST=1", ...(opts.env ?? [])] });
}

/** One file's run in a shared guest boot (bunTestFilesInV2Guest). */
export interface GuestFileRun {
  file: string;
  /** `bun test`'s exit code; undefined when the file never finished (the guest timed out or failed first). */
  exitCode: number | undefined;
  /** Its stdout and stderr. */
  output: string;
  /** Wall time of its `bun test` inside the guest. */
  seconds: number | undefined;
}

/**
 * Runs `bun test <file>` for each file, one after the other, each in its own bun process, all in one
 * guest boot (a boot costs ~1.5 s with busybox init, ~9 s with systemd). Every file's output and exit
 * code is kept apart (written to a host directory shared with the guest), so a failure names its file.
 */
export async function bunTestFilesInV2Guest(files: string[], opts: GuestOptions = {}): Promise<{ guest: GuestRun; files: GuestFileRun[]; seconds: number }> {
  const out = mkdtempSync("/var/tmp/bunlet-guest-files-");
  try {
    const script = [
      "out=$1; bun=$2; shift 2; i=0",
      'for f in "$@"; do',
      "  i=$((i+1)); start=$(date +%s%N)",
      '  "$bun" test --timeout 120000 "$f" >"$out/$i.log" 2>&1; rc=$?',
      '  echo "$rc $(( ($(date +%s%N) - start) / 1000000 ))" >"$out/$i.rc"',
      "done",
    ].join("\n");
    const started = performance.now();
    const guest = await runInV2Guest(withBunletTmpfs(["bash", "-c", script, "files", out, process.execPath, ...files]), {
      ...opts,
      rw: [out],
      env: ["BUNLET_IN_V2_GUEST=1", ...(opts.env ?? [])],
    });
    const seconds = (performance.now() - started) / 1000;
    const read = (f: string) => (existsSync(join(out, f)) ? readFileSync(join(out, f), "utf8") : undefined);
    return {
      guest,
      seconds,
      files: files.map((file, i) => {
        const [rc, ms] = (read(`${i + 1}.rc`) ?? "").trim().split(" ");
        return { file, exitCode: rc ? Number(rc) : undefined, output: read(`${i + 1}.log`) ?? "", seconds: ms ? Number(ms) / 1000 : undefined };
      }),
    };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}
