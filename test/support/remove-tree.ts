// A test's or bench's directory removed with whatever is still mounted under it: an agent's root
// directory bind-mounted on itself (upstream MakeRShared, on a host whose "/" is private), the tmpfs of a
// pod's secret or Memory emptyDir volume it did not tear down. Unmounted deepest first, never deleted
// through.
import { spawnSync } from "node:child_process";
import { rmSync } from "node:fs";
import { resolve } from "node:path";
import { mountPointsUnder } from "../../src/pod/volumes/mount-points.ts";

export function removeTree(dir: string): void {
  for (const mp of mountPointsUnder(resolve(dir))) spawnSync("umount", ["-l", mp]);
  rmSync(dir, { recursive: true, force: true });
}
