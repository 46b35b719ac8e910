// fsGroup ownership of a pod volume (upstream pkg/volume SetVolumeOwnership, volume_linux.go): every
// file and directory below the volume gets the fsGroup as its group, group read/write (read-only
// volumes: read), and directories get group search and the setgid bit so new files inherit the
// group. Symlinks are re-grouped but never chmod-ed (that would change their target).
import { chmodSync, lchownSync, lstatSync, readdirSync } from "node:fs";
import { join } from "node:path";

const RW_MASK = 0o660;
const RO_MASK = 0o440;
const EXEC_MASK = 0o110;
const SETGID = 0o2000;

export function setVolumeOwnership(dir: string, fsGroup: number, readOnly = false): void {
  const visit = (path: string) => {
    const st = lstatSync(path);
    lchownSync(path, st.uid, fsGroup);
    if (st.isSymbolicLink()) return;
    let mask = readOnly ? RO_MASK : RW_MASK;
    if (st.isDirectory()) mask |= SETGID | EXEC_MASK;
    chmodSync(path, (st.mode & 0o7777) | mask);
    if (st.isDirectory()) for (const e of readdirSync(path)) visit(join(path, e));
  };
  visit(dir);
}
