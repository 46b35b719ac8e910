// Mount points below a directory, from /proc/self/mountinfo (upstream mount-utils
// IsLikelyNotMountPoint's stronger cousin: a bind mount of a directory on the same filesystem has the
// same st_dev as its parent, so only mountinfo tells it is a mount).
import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";

export const MOUNTINFO = "/proc/self/mountinfo";

/** The mount table, read without blocking the event loop (for mountPointsUnder's `mountinfo`). */
export const readMountInfo = (): Promise<string> => readFile(MOUNTINFO, "utf8");

/** Mount points at or below `prefix`, deepest first (mountinfo field 5, octal escapes decoded). */
export function mountPointsUnder(prefix: string, mountinfo = readFileSync(MOUNTINFO, "utf8")): string[] {
  const out: string[] = [];
  for (const line of mountinfo.split("\n")) {
    const f = line.split(" ");
    if (f.length < 5) continue;
    const mp = f[4]!.replace(/\\([0-7]{3})/g, (_m, o: string) => String.fromCharCode(Number.parseInt(o, 8)));
    if (mp === prefix || mp.startsWith(`${prefix}/`)) out.push(mp);
  }
  return out.sort((a, b) => b.length - a.length);
}
