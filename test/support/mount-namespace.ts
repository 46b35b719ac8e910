// Preloaded by `bun test` (bunfig.toml). Machine tests start agents whose root directories live under
// the temp dir; an agent makes its root directory's mount shared at start (upstream MakeRShared), and on
// a host whose "/" is private — this one's — that is a bind mount per agent, which a test's rmSync
// cannot remove. So when run as root on such a host, the whole run re-executes itself in a mount
// namespace of its own whose "/" is rshared, as on a systemd host: the host's mounts come in
// (--propagation slave), none of the run's go out, and they all end with it. The one test of the bind
// mount itself (test/integration/pod/root-dir-shared.test.ts) makes a private mount of its own.
import { spawnSync } from "node:child_process";
import { readFileSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { isShared } from "../../src/pod/volumes/hostutil.ts";
import { MOUNTINFO } from "../../src/pod/volumes/mount-points.ts";

const INNER_ENV = "BUNLET_TEST_MOUNT_NS";

function needsOwnNamespace(): boolean {
  if (process.getuid?.() !== 0 || process.env[INNER_ENV]) return false;
  return !isShared(realpathSync(tmpdir()), readFileSync(MOUNTINFO, "utf8"));
}

if (needsOwnNamespace()) {
  // The command line as typed (process.argv drops `test` and the flags).
  const argv = readFileSync("/proc/self/cmdline", "utf8").split("\0").slice(0, -1);
  console.error(`bun test: re-running in a mount namespace of its own with "/" rshared (${import.meta.path})`);
  const inner = spawnSync("unshare", ["--mount", "--propagation", "slave", "--", "sh", "-c", 'mount --make-rshared / && exec "$@"', "sh", ...argv], {
    stdio: "inherit",
    env: { ...process.env, [INNER_ENV]: "1" },
  });
  if (inner.error) throw new Error(`unshare: ${inner.error.message}`);
  process.exit(inner.status ?? 1);
}
