// Which kernel memory notifications this node offers, decided once at startup so the agent can
// log one line per missing feature instead of failing every 10 s.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

export interface MemoryNotificationSupport {
  /** cgroup v1 memory controller mount with cgroup.event_control (memcg thresholds). */
  memcgRoot?: string;
  /** A cgroup2 (or /proc) memory.pressure file for PSI triggers. */
  pressureFile?: string;
  /** The cgroup v2 mount with the memory controller at its root, for the working-set fast path. */
  unifiedMemoryRoot?: string;
  /** Human-readable reasons for what is missing. */
  missing: string[];
}

export function detectMemoryNotification(opts: { memoryCgroupRoot?: string; unifiedRoot?: string; unifiedMountRoot?: string } = {}): MemoryNotificationSupport {
  const memRoot = opts.memoryCgroupRoot ?? "/sys/fs/cgroup/memory";
  const unified = opts.unifiedRoot ?? "/sys/fs/cgroup/unified";
  const out: MemoryNotificationSupport = { missing: [] };
  if (existsSync(join(memRoot, "cgroup.event_control")) && existsSync(join(memRoot, "memory.usage_in_bytes"))) out.memcgRoot = memRoot;
  else out.missing.push(`no cgroup v1 memory controller at ${memRoot} (cgroup.event_control): memcg threshold notifications are off, as upstream on cgroup v2`);
  for (const f of [join(unified, "memory.pressure"), "/sys/fs/cgroup/memory.pressure", "/proc/pressure/memory"]) {
    if (existsSync(f)) {
      out.pressureFile = f;
      break;
    }
  }
  const v2 = opts.unifiedMountRoot ?? "/sys/fs/cgroup";
  if (!out.memcgRoot && hasMemoryController(v2)) out.unifiedMemoryRoot = v2;
  if (!out.pressureFile) out.missing.push("no memory.pressure file (kernel without PSI or booted with psi=0): PSI triggers are off");
  return out;
}

/** A cgroup2 mount whose root offers the memory controller (cgroup.controllers lists "memory"). */
function hasMemoryController(mount: string): boolean {
  try {
    return readFileSync(join(mount, "cgroup.controllers"), "utf8").split(/\s+/).includes("memory");
  } catch {
    return false;
  }
}
