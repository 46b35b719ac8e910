// hostPath volume type checks (upstream pkg/volume/hostpath/host_path.go checkType): the path must be
// what `type` says; the *OrCreate types create it (directory 0755, file 0644) when missing. "" (the
// default) checks nothing. Errors are upstream's texts; the type is file-type.ts getFileType's, as
// upstream's fileTypeChecker asks hostutil GetFileType, and a path that cannot be stat'ed is missing.
import { closeSync, mkdirSync, openSync, statSync, type Stats } from "node:fs";
import { getFileType, type FileType } from "./file-type.ts";

export type HostPathType = "" | "DirectoryOrCreate" | "Directory" | "FileOrCreate" | "File" | "Socket" | "CharDevice" | "BlockDevice";

/** The file type each type wants the path to be, and upstream's words for it in the error. */
const EXPECTED: Record<Exclude<HostPathType, "">, readonly [FileType, string]> = {
  DirectoryOrCreate: ["Directory", "a directory"],
  Directory: ["Directory", "a directory"],
  FileOrCreate: ["File", "a file"],
  File: ["File", "a file"],
  Socket: ["Socket", "a socket file"],
  CharDevice: ["CharDevice", "a character device"],
  BlockDevice: ["BlockDevice", "a block device"],
};

/** The path's type, or undefined when it cannot be stat'ed (upstream's Exists: false). */
function existingType(path: string, stat: (p: string) => Stats): FileType | undefined {
  try {
    return getFileType(path, stat);
  } catch {
    return undefined;
  }
}

/** Throws upstream's error when `path` is not of `type`; creates it for the *OrCreate types. */
export function checkHostPathType(path: string, type: HostPathType | undefined, stat: (p: string) => Stats = statSync): void {
  if (!type) return;
  if (!Object.hasOwn(EXPECTED, type)) throw new Error(`${type as string} is an invalid volume type`);
  const actual = existingType(path, stat);
  if (actual === undefined && type === "DirectoryOrCreate") {
    mkdirSync(path, { recursive: true, mode: 0o755 });
    return;
  }
  if (actual === undefined && type === "FileOrCreate") {
    // upstream MakeFile: O_CREATE 0644 (the parent must exist).
    closeSync(openSync(path, "a", 0o644));
    return;
  }
  const [fileType, what] = EXPECTED[type];
  if (actual !== fileType) throw new Error(`hostPath type check failed: ${path} is not ${what}`);
}
