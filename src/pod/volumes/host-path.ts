// hostPath volume type checks (upstream pkg/volume/hostpath/host_path.go checkType): the path must be
// what `type` says; the *OrCreate types create it (directory 0755, file 0644) when missing. "" (the
// default) checks nothing. Errors are upstream's texts; stat follows symlinks, as os.Stat does.
import { closeSync, mkdirSync, openSync, statSync, type Stats } from "node:fs";

export type HostPathType = "" | "DirectoryOrCreate" | "Directory" | "FileOrCreate" | "File" | "Socket" | "CharDevice" | "BlockDevice";

function stat(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}

/** Throws upstream's error when `path` is not of `type`; creates it for the *OrCreate types. */
export function checkHostPathType(path: string, type: HostPathType | undefined): void {
  if (!type) return;
  const st = stat(path);
  const fail = (what: string) => new Error(`hostPath type check failed: ${path} is not ${what}`);
  switch (type) {
    // biome-ignore lint/suspicious/noFallthroughSwitchClause: once it exists, DirectoryOrCreate is checked as Directory
    case "DirectoryOrCreate":
      if (!st) {
        mkdirSync(path, { recursive: true, mode: 0o755 });
        return;
      }
    case "Directory":
      if (!st?.isDirectory()) throw fail("a directory");
      return;
    // biome-ignore lint/suspicious/noFallthroughSwitchClause: once it exists, FileOrCreate is checked as File
    case "FileOrCreate":
      if (!st) {
        // upstream MakeFile: O_CREATE 0644 (the parent must exist).
        closeSync(openSync(path, "a", 0o644));
        return;
      }
    case "File":
      if (!st?.isFile()) throw fail("a file");
      return;
    case "Socket":
      if (!st?.isSocket()) throw fail("a socket file");
      return;
    case "CharDevice":
      if (!st?.isCharacterDevice()) throw fail("a character device");
      return;
    case "BlockDevice":
      if (!st?.isBlockDevice()) throw fail("a block device");
      return;
    default:
      throw new Error(`${type as string} is an invalid volume type`);
  }
}
