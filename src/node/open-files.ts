// maxOpenFiles (upstream RunKubelet: rlimit.SetNumFiles(maxOpenFiles), soft = hard = the value, and
// "Failed to set rlimit on max file handles" when it cannot). The file-descriptor limit bounds how many
// connections a flood can hold; bunlet raises it as upstream does, never above fs.nr_open (the
// kernel's ceiling, EPERM beyond it), and never lowers a larger limit the service manager gave.
import { readFileSync } from "node:fs";
import { getrlimit, RLIMIT_NOFILE, setrlimit } from "../../ffi/libc.ts";
import { kv, log } from "../log.ts";

export function nrOpen(path = "/proc/sys/fs/nr_open"): number {
  try {
    const n = Number(readFileSync(path, "utf8").trim());
    return Number.isFinite(n) && n > 0 ? n : Infinity;
  } catch {
    return Infinity;
  }
}

/** Sets RLIMIT_NOFILE to maxOpenFiles (capped by fs.nr_open); returns the soft limit in force after. */
export function applyMaxOpenFiles(maxOpenFiles: number, deps: { getrlimit?: typeof getrlimit; setrlimit?: typeof setrlimit; nrOpen?: number } = {}): number {
  const get = deps.getrlimit ?? getrlimit;
  const set = deps.setrlimit ?? setrlimit;
  const before = get(RLIMIT_NOFILE);
  if (maxOpenFiles <= 0) return before.cur;
  const want = Math.min(maxOpenFiles, deps.nrOpen ?? nrOpen());
  if (before.cur >= want && before.max >= want) return before.cur;
  try {
    set(RLIMIT_NOFILE, { cur: want, max: Math.max(want, before.max) });
    log.info(`Set rlimit on max file handles ${kv({ maxOpenFiles, limit: want, previous: before.cur })}`);
    return want;
  } catch (e) {
    // Without CAP_SYS_RESOURCE only the soft limit can rise, up to the hard one.
    log.error(`Failed to set rlimit on max file handles ${kv({ maxOpenFiles, limit: want, hard: before.max, error: (e as Error).message })}`);
    const soft = Math.min(want, before.max);
    if (soft > before.cur) {
      try {
        set(RLIMIT_NOFILE, { cur: soft, max: before.max });
        return soft;
      } catch {
        // keep what we had
      }
    }
    return before.cur;
  }
}

/** The soft RLIMIT_NOFILE in force now. */
export function openFilesLimit(): number {
  try {
    return getrlimit(RLIMIT_NOFILE).cur;
  } catch {
    return 1024;
  }
}
