// Runs the real-kernel cgroup v2 test files inside the v2 guest, so `bun test` on a cgroup v1 host
// (this machine, CI) still proves them: each file's own pass/fail is this test's verdict. The files
// that need the same guest (init and cgroup layout) share one boot, each still in its own `bun test`
// process with its own output and exit code; the boot runs the files whose tests a -t filter selects.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { ensureBuilt } from "../../support/binary.ts";
import { bunTestFilesInV2Guest, v2GuestSkipReason, type GuestFileRun } from "../../support/v2-guest.ts";

const skip = v2GuestSkipReason();

type Guest = "busybox-init" | "systemd" | "systemd-v1";
/**
 * Files that need a real cgroup v2 kernel (and systemd as PID 1: "systemd"; "systemd-v1": systemd on the
 * guest's cgroup v1 hybrid layout); they skip themselves elsewhere.
 */
const GUEST_FILES: [string, Guest][] = [
  ["test/integration/v2/qos-cgroups.test.ts", "busybox-init"],
  ["test/integration/v2/memory-events.test.ts", "busybox-init"],
  ["test/integration/v2/working-set-fast.test.ts", "busybox-init"],
  ["test/integration/v2/pods.test.ts", "busybox-init"],
  ["test/integration/v2/eviction.test.ts", "busybox-init"],
  ["test/integration/v2/stats.test.ts", "busybox-init"],
  ["test/integration/v2/swap.test.ts", "busybox-init"],
  ["test/integration/v2/systemd-slices.test.ts", "systemd"],
  ["test/integration/v2/systemd-dbus.test.ts", "systemd"],
  ["test/integration/v2/systemd-pods.test.ts", "systemd"],
  ["test/integration/v2/shutdown-logind.test.ts", "systemd"],
  ["test/integration/v2/systemd-v1.test.ts", "systemd-v1"],
];
const DESCRIBE = "cgroup v2 tests inside the guest";
const testName = (file: string, guest: Guest) => `${file} passes in the guest (${guest})`;
/** Guest seconds per file (a loaded 2-CPU host took up to ~3 min for one). */
const PER_FILE_S = 420;

/** The -t / --test-name-pattern of this bun test run (Bun keeps it out of process.argv; /proc has it). */
function namePattern(): RegExp | undefined {
  let args: string[];
  try {
    args = readFileSync("/proc/self/cmdline", "utf8").split("\0");
  } catch {
    return undefined;
  }
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const v = a === "-t" || a === "--test-name-pattern" ? args[i + 1] : /^--test-name-pattern=(.*)$/.exec(a)?.[1];
    if (v !== undefined) return new RegExp(v);
  }
  return undefined;
}
const pattern = namePattern();
const selected = (file: string, guest: Guest) => !pattern || pattern.test(`${DESCRIBE} ${testName(file, guest)}`);

/** One boot per guest kind, for the selected files of that kind (started by the first of them to run). */
const boots = new Map<Guest, Promise<Map<string, GuestFileRun>>>();
function boot(guest: Guest, files: string[]): Promise<Map<string, GuestFileRun>> {
  return (async () => {
    await ensureBuilt(); // pods/eviction/… run containerd and dist/bunlet (built here: the guest's writes vanish)
    const r = await bunTestFilesInV2Guest(files, {
      memoryMiB: 1536,
      timeoutS: 60 + PER_FILE_S * files.length,
      systemd: guest !== "busybox-init",
      // /dev/ubda: swap.test.ts makes it swap and turns it on for its own run.
      diskMiB: guest === "busybox-init" ? 1024 : undefined,
      cgroupV1: guest === "systemd-v1",
    });
    console.log(
      `guest boot (${guest}): ${files.length} file(s) in ${r.seconds.toFixed(1)} s, exit ${r.guest.exitCode} — ${r.files.map((f) => `${f.file.replace(/^.*\//, "")} ${f.seconds?.toFixed(1) ?? "?"} s`).join(", ")}`,
    );
    return new Map(
      r.files.map((f) => [
        f.file,
        f.exitCode === undefined
          ? { ...f, output: `${f.output}\n--- the file did not finish; guest exit ${r.guest.exitCode}, its stderr (tail):\n${r.guest.stderr.slice(-3000)}` }
          : f,
      ]),
    );
  })();
}
function runOf(file: string, guest: Guest): Promise<GuestFileRun> {
  let b = boots.get(guest);
  if (!b) {
    b = boot(
      guest,
      GUEST_FILES.filter(([f, g]) => g === guest && selected(f, g)).map(([f]) => f),
    );
    boots.set(guest, b);
  }
  // A file the name pattern did not predict (it should not happen) gets a boot of its own.
  return b.then((runs) => runs.get(file) ?? boot(guest, [file]).then((m) => m.get(file)!));
}
const bootTimeoutMs = (guest: Guest) => (60 + PER_FILE_S * GUEST_FILES.filter(([, g]) => g === guest).length + 120) * 1000;

describe.skipIf(!!skip)(DESCRIBE, () => {
  for (const [file, guest] of GUEST_FILES) {
    test(
      testName(file, guest),
      async () => {
        const r = await runOf(file, guest);
        expect(r.exitCode, `${file}:\n${r.output}`).toBe(0);
        // The file must really have run there, not skipped.
        expect(r.output, file).not.toMatch(/^\s*[1-9]\d* skip$/m);
        expect(r.output, file).toMatch(/^\s*[1-9]\d* pass$/m);
      },
      bootTimeoutMs(guest),
    );
  }
});
