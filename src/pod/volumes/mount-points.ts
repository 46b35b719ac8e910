// The mount table, from /proc/self/mountinfo: the mount points below a directory (upstream mount-utils
// IsLikelyNotMountPoint's stronger cousin: a bind mount of a directory on the same filesystem has the
// same st_dev as its parent, so only mountinfo tells it is a mount) and the mount a path resides on.
import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";

export const MOUNTINFO = "/proc/self/mountinfo";

/** A mountinfo path field with its octal escapes (\040 for a space…) decoded. */
const unescapeMountPath = (s: string) => s.replace(/\\([0-7]{3})/g, (_m, o: string) => String.fromCharCode(Number.parseInt(o, 8)));

/** The mount table, read without blocking the event loop (for mountPointsUnder's `mountinfo`). */
export const readMountInfo = (): Promise<string> => readFile(MOUNTINFO, "utf8");

/** Mount points at or below `prefix`, deepest first (mountinfo field 5, octal escapes decoded). */
export function mountPointsUnder(prefix: string, mountinfo = readFileSync(MOUNTINFO, "utf8")): string[] {
  const out: string[] = [];
  for (const line of mountinfo.split("\n")) {
    const f = line.split(" ");
    if (f.length < 5) continue;
    const mp = unescapeMountPath(f[4]!);
    if (mp === prefix || mp.startsWith(`${prefix}/`)) out.push(mp);
  }
  return out.sort((a, b) => b.length - a.length);
}

/** One mountinfo line's mount point, optional fields (`shared:N`, `master:N`, …) and mount source. */
export interface MountInfoEntry {
  mountPoint: string;
  optionalFields: string[];
  /** The filesystem's source ("/dev/sda1", "tmpfs", "overlay"), the second field after "-". */
  source: string;
}

/** mountinfo's lines in order: field 5 (octal escapes decoded), the fields between 6 and "-", the source. */
export function parseMountInfo(mountinfo: string): MountInfoEntry[] {
  const out: MountInfoEntry[] = [];
  for (const line of mountinfo.split("\n")) {
    const f = line.split(" ");
    const sep = f.indexOf("-", 6);
    if (f.length < 7 || sep < 0) continue;
    out.push({ mountPoint: unescapeMountPath(f[4]!), optionalFields: f.slice(6, sep), source: unescapeMountPath(f[sep + 2] ?? "") });
  }
  return out;
}

/** The mount `path` resides on: the last mount in mountinfo whose mount point holds it (upstream findMountInfo). */
export function mountHolding(path: string, mountinfo: string): MountInfoEntry | undefined {
  const entries = parseMountInfo(mountinfo);
  for (let i = entries.length - 1; i >= 0; i--) {
    const mp = entries[i]!.mountPoint;
    if (mp === "/" || path === mp || path.startsWith(`${mp}/`)) return entries[i];
  }
  return undefined;
}
