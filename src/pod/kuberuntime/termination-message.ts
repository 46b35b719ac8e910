// Container termination messages, as upstream kuberuntime_container.go (makeMounts,
// getTerminationMessage, readLastStringFromContainerLogs, convertToKubeContainerStatus) and the
// status manager's normalizeStatus do it:
//   before create: an empty host file <rootDir>/pods/<uid>/containers/<name>/<8 hex> (0666, so any
//     container user can write it) bind-mounted at terminationMessagePath (default /dev/termination-log);
//   once exited: the last 4 KiB of that file become the terminated state's message (appended to the
//     runtime's own message after ": "); with FallbackToLogsOnError, a container that failed and left
//     the file empty gets the last 2 KiB of its last 80 log lines instead;
//   in the pod status: each message cut to 12 KiB / number of (init + regular) containers
//     (src/pod/status.ts truncateTerminationMessages).
// The files go with the pod's directory when the pod is removed.
import { closeSync, fstatSync, mkdirSync, openSync, readSync, writeFileSync, chmodSync } from "node:fs";
import { join } from "node:path";
import { decodeCriLine, formatEntry } from "../../cri/log-format.ts";
import type { ContainerStatus as CriContainerStatus, Mount } from "../../cri/types.ts";
import { kv, log } from "../../log.ts";
import { podDir } from "../pod-dir.ts";
import { CONTAINER_TERMINATION_MESSAGE_PATH_LABEL, CONTAINER_TERMINATION_MESSAGE_POLICY_LABEL } from "./labels.ts";

/** Upstream MaxContainerTerminationMessageLength: what is read from the file (its end). */
export const MAX_CONTAINER_TERMINATION_MESSAGE_LENGTH = 4 * 1024;
/** Upstream MaxContainerTerminationMessageLogLength: what is kept of the log tail (its end). */
export const MAX_CONTAINER_TERMINATION_MESSAGE_LOG_LENGTH = 2 * 1024;
/** Upstream MaxContainerTerminationMessageLogLines: log lines read for FallbackToLogsOnError. */
export const MAX_CONTAINER_TERMINATION_MESSAGE_LOG_LINES = 80;
/** core/v1 default of terminationMessagePath (SetDefaults_Container; also for an empty value). */
export const DEFAULT_TERMINATION_MESSAGE_PATH = "/dev/termination-log";

export const terminationMessagePathOf = (c: { terminationMessagePath?: string }): string => c.terminationMessagePath || DEFAULT_TERMINATION_MESSAGE_PATH;

/** <rootDir>/pods/<uid>/containers (upstream config.DefaultContainersDir under the pod directory). */
export function podContainersDir(rootDir: string, uid: string): string {
  return join(podDir(rootDir, uid), "containers");
}

/** <rootDir>/pods/<uid>/containers/<name> (upstream getPodContainerDir). */
export function podContainerDir(rootDir: string, uid: string, containerName: string): string {
  return join(podContainersDir(rootDir, uid), containerName);
}

/**
 * Creates a fresh, empty termination-log file for one container instance and returns its host path
 * (upstream makeMounts: the directory is unique per pod and container, a random 8-hex name per
 * instance). A failure is logged and yields no mount, as upstream's HandleError does.
 */
export function createTerminationMessageFile(rootDir: string, uid: string, containerName: string, rand: () => number = Math.random): string | undefined {
  const dir = podContainerDir(rootDir, uid, containerName);
  const path = join(
    dir,
    Math.floor(rand() * 2 ** 32)
      .toString(16)
      .padStart(8, "0"),
  );
  try {
    mkdirSync(dir, { recursive: true, mode: 0o750 });
    writeFileSync(path, "", { flag: "w" });
    // The umask must not narrow it: the container's user, whoever it is, writes this file.
    chmodSync(path, 0o666);
    return path;
  } catch (e) {
    log.error(`error on creating termination-log file ${kv({ path, error: (e as Error).message })}`);
    return undefined;
  }
}

/** The CRI mount of the termination-log file (appended after the volume mounts, as upstream). */
export const terminationMessageMount = (hostPath: string, containerPath: string): Mount => ({ containerPath, hostPath, readonly: false });

/** The last `maxBytes` bytes of a file (upstream tail.ReadAtMost); throws as the read does (ENOENT …). */
export function readAtMost(path: string, maxBytes: number): string {
  const fd = openSync(path, "r");
  try {
    const size = fstatSync(fd).size;
    const start = Math.max(0, size - maxBytes);
    const buf = Buffer.alloc(size - start);
    let got = 0;
    while (got < buf.length) {
      const n = readSync(fd, buf, got, buf.length - got, start + got);
      if (n === 0) break;
      got += n;
    }
    return buf.subarray(0, got).toString("utf8");
  } finally {
    closeSync(fd);
  }
}

export interface TerminationMessageRead {
  message: string;
  /** The logs are to be read instead (FallbackToLogsOnError and nothing in the file). */
  checkLogs: boolean;
}

/**
 * upstream getTerminationMessage: the mount at `terminationMessagePath` names the host file; its last
 * 4 KiB are the message. No path, no such mount or no file → the logs decide when falling back; a
 * read error is the message itself and the logs are not read.
 */
export function terminationMessageFromFile(
  mounts: readonly Pick<Mount, "containerPath" | "hostPath">[],
  terminationMessagePath: string,
  fallbackToLogs: boolean,
  read: (hostPath: string, maxBytes: number) => string = readAtMost,
): TerminationMessageRead {
  if (!terminationMessagePath) return { message: "", checkLogs: fallbackToLogs };
  const mount = mounts.find((m) => m.containerPath === terminationMessagePath);
  if (!mount) return { message: "", checkLogs: fallbackToLogs };
  let data: string;
  try {
    data = read(mount.hostPath, MAX_CONTAINER_TERMINATION_MESSAGE_LENGTH);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return { message: "", checkLogs: fallbackToLogs };
    return { message: `Error on reading termination log ${mount.hostPath}: ${(e as Error).message}`, checkLogs: false };
  }
  return { message: data, checkLogs: fallbackToLogs && data.length === 0 };
}

/**
 * What a failed container's log says last (upstream readLastStringFromContainerLogs: ReadLogs with
 * tailLines 80 into a 2 KiB ring buffer): the content of the last `maxLines` CRI log lines, stdout and
 * stderr interleaved as written, of which the last `maxBytes` bytes are kept. Pure.
 */
export function lastStringFromLogText(
  text: string,
  maxLines = MAX_CONTAINER_TERMINATION_MESSAGE_LOG_LINES,
  maxBytes = MAX_CONTAINER_TERMINATION_MESSAGE_LOG_LENGTH,
): string {
  const lines = text.split("\n");
  // A trailing newline ends the last line; it does not start one.
  if (lines.at(-1) === "") lines.pop();
  const out = lines
    .slice(-maxLines)
    .map(decodeCriLine)
    .filter((e) => e !== undefined)
    .map((e) => formatEntry(e, false))
    .join("");
  const bytes = Buffer.from(out, "utf8");
  return bytes.length <= maxBytes ? out : bytes.subarray(bytes.length - maxBytes).toString("utf8");
}

/**
 * Reads only as much of the log's end as the last `maxLines` lines need (the file may be 10 MiB; the
 * runtime splits lines at 16 KiB, so 80 lines are at most ~1.3 MiB).
 */
function readLastLines(path: string, maxLines: number): string {
  const fd = openSync(path, "r");
  try {
    const size = fstatSync(fd).size;
    const chunks: Buffer[] = [];
    let pos = size;
    let newlines = 0;
    // maxLines + 1 newlines bound maxLines whole lines (the file ends with one).
    while (pos > 0 && newlines <= maxLines) {
      const len = Math.min(64 * 1024, pos);
      pos -= len;
      const buf = Buffer.alloc(len);
      readSync(fd, buf, 0, len, pos);
      for (const b of buf) if (b === 0x0a) newlines++;
      chunks.unshift(buf);
    }
    const text = Buffer.concat(chunks).toString("utf8");
    // The first line may be cut at the chunk boundary: drop it unless the file's start was reached.
    return pos > 0 ? text.slice(text.indexOf("\n") + 1) : text;
  } finally {
    closeSync(fd);
  }
}

/** The log tail for FallbackToLogsOnError; a read failure is the message, as upstream's. */
export function readLastStringFromContainerLogs(logPath: string): string {
  try {
    return lastStringFromLogText(readLastLines(logPath, MAX_CONTAINER_TERMINATION_MESSAGE_LOG_LINES));
  } catch (e) {
    return `Error on reading termination message from logs: ${(e as Error).message}`;
  }
}

export interface TerminationMessageIo {
  readFile(hostPath: string, maxBytes: number): string;
  readLogs(logPath: string): string;
}

const realIo: TerminationMessageIo = { readFile: readAtMost, readLogs: readLastStringFromContainerLogs };

/**
 * The termination message of an exited container, from the CRI status (its annotations carry the
 * path and policy, its mounts the host file, its logPath the log): upstream convertToKubeContainerStatus.
 * A container that could not even start has no logs to fall back to.
 */
export function containerTerminationMessage(
  status: Pick<CriContainerStatus, "annotations" | "mounts" | "exitCode" | "reason" | "logPath">,
  io: TerminationMessageIo = realIo,
): string {
  const path = status.annotations[CONTAINER_TERMINATION_MESSAGE_PATH_LABEL] ?? "";
  const fallbackToLogs =
    status.annotations[CONTAINER_TERMINATION_MESSAGE_POLICY_LABEL] === "FallbackToLogsOnError" &&
    status.exitCode !== 0 &&
    status.reason !== "ContainerCannotRun";
  const r = terminationMessageFromFile(status.mounts ?? [], path, fallbackToLogs, io.readFile);
  return r.checkLogs ? io.readLogs(status.logPath) : r.message;
}

/** The runtime's own message enriched with the termination message ("<runtime>: <message>"). */
export function withTerminationMessage(runtimeMessage: string | undefined, terminationMessage: string): string | undefined {
  if (!terminationMessage) return runtimeMessage;
  return runtimeMessage ? `${runtimeMessage}: ${terminationMessage}` : terminationMessage;
}
