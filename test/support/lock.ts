// flock(2) probes for the lock-file tests.
import * as libc from "../../ffi/libc.ts";

/** Whether another open file description can take the lock on `path` right now (then drops it). */
export function canLock(path: string): boolean {
  const fd = libc.open(path, libc.O_RDWR | libc.O_CLOEXEC);
  try {
    libc.flock(fd, libc.LOCK_EX | libc.LOCK_NB);
    return true;
  } catch {
    return false;
  } finally {
    libc.close(fd);
  }
}
