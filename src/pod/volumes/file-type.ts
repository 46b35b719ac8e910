// The type of a file on the host (upstream pkg/util/hostutil GetFileType): what a local PV's path is,
// before its plugin mounts (a directory or a block device) or maps it (a block device). stat follows
// symlinks, as os.Stat does.
import { statSync, type Stats } from "node:fs";

export type FileType = "Directory" | "File" | "Socket" | "CharDevice" | "BlockDevice" | "Other";

/** The file's type; a missing path throws `path "<path>" does not exist`, other stat failures their own error. */
export function getFileType(path: string, stat: (p: string) => Stats = statSync): FileType {
  let st: Stats;
  try {
    st = stat(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") throw new Error(`path "${path}" does not exist`);
    throw e;
  }
  if (st.isDirectory()) return "Directory";
  if (st.isBlockDevice()) return "BlockDevice";
  if (st.isCharacterDevice()) return "CharDevice";
  if (st.isSocket()) return "Socket";
  if (st.isFile()) return "File";
  return "Other";
}
