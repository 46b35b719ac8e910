// The streaming endpoints' paths and query parameters (upstream pkg/kubelet/server/server.go
// InstallDebuggingHandlers + getExecRequestParams, remotecommand NewOptions, portforward
// NewV4Options): pure functions, so every malformed request is a table test.
//   /exec/{podNamespace}/{podID}[/{uid}]/{containerName}     GET POST
//   /attach/{podNamespace}/{podID}[/{uid}]/{containerName}   GET POST
//   /portForward/{podNamespace}/{podID}[/{uid}]              GET POST
//   /run/{podNamespace}/{podID}[/{uid}]/{containerName}      POST (?cmd=… split on spaces)
import type { StreamOptions } from "../../cri/types.ts";

export type StreamKind = "exec" | "attach" | "portForward" | "run";

export interface StreamTarget {
  kind: StreamKind;
  namespace: string;
  pod: string;
  /** Optional pod UID segment; "" when absent. */
  uid: string;
  /** "" for portForward. */
  container: string;
}

export const STREAM_PREFIXES: Record<StreamKind, string> = { exec: "/exec", attach: "/attach", portForward: "/portForward", run: "/run" };

export const STREAM_METHODS: Record<StreamKind, readonly string[]> = {
  exec: ["GET", "POST"],
  attach: ["GET", "POST"],
  portForward: ["GET", "POST"],
  run: ["POST"],
};

/** The streaming endpoint a path names, or undefined (→ 404) when it names none. */
export function parseStreamPath(pathname: string): StreamTarget | undefined {
  const kind = (Object.keys(STREAM_PREFIXES) as StreamKind[]).find((k) => pathname.startsWith(`${STREAM_PREFIXES[k]}/`));
  if (!kind) return undefined;
  let segs: string[];
  try {
    segs = pathname
      .slice(STREAM_PREFIXES[kind].length + 1)
      .split("/")
      .map(decodeURIComponent);
  } catch {
    return undefined;
  }
  if (segs.some((s) => s === "")) return undefined;
  if (kind === "portForward") {
    if (segs.length !== 2 && segs.length !== 3) return undefined;
    return { kind, namespace: segs[0]!, pod: segs[1]!, uid: segs[2] ?? "", container: "" };
  }
  if (segs.length !== 3 && segs.length !== 4) return undefined;
  return { kind, namespace: segs[0]!, pod: segs[1]!, uid: segs.length === 4 ? segs[2]! : "", container: segs[segs.length - 1]! };
}

export class StreamParamError extends Error {
  override name = "StreamParamError";
}

/**
 * remotecommand NewOptions: the kubelet's query names the streams as k8s.io/api core/v1's
 * ExecStdinParam "input", ExecStdoutParam "output", ExecStderrParam "error" and ExecTTYParam "tty"
 * (what kube-apiserver's pods/exec and pods/attach send); "1" turns a stream on; tty drops stderr;
 * at least one stream.
 */
export function parseStreamOptions(q: URLSearchParams): StreamOptions {
  const on = (n: string) => q.get(n) === "1";
  const tty = on("tty");
  const o = { stdin: on("input"), stdout: on("output"), stderr: on("error") && !tty, tty };
  if (!o.stdin && !o.stdout && !o.stderr) throw new StreamParamError("you must specify at least 1 of stdin, stdout, stderr");
  return o;
}

/** The command of an exec: every "command" query value, in order. */
export function execCommand(q: URLSearchParams): string[] {
  return q.getAll("command");
}

/** /run's command: "cmd" split on single spaces, as upstream (legacy). */
export function runCommand(q: URLSearchParams): string[] {
  return (q.get("cmd") ?? "").split(" ");
}

/** portforward NewV4Options: WebSocket clients name the ports in the query; SPDY ones per stream. */
export function parsePortForwardPorts(q: URLSearchParams, webSocket: boolean): number[] {
  if (!webSocket) return [];
  const values = q.getAll("port");
  if (values.length === 0) throw new StreamParamError(`query parameter "port" is required`);
  const ports: number[] = [];
  for (const v of values) {
    if (v === "") throw new StreamParamError(`query parameter "port" cannot be empty`);
    for (const p of v.split(",")) {
      if (!/^\d+$/.test(p)) throw new StreamParamError(`unable to parse "${v}" as a port: strconv.ParseUint: parsing "${p}": invalid syntax`);
      const n = Number(p);
      if (n > 65535) throw new StreamParamError(`unable to parse "${v}" as a port: strconv.ParseUint: parsing "${p}": value out of range`);
      if (n < 1) throw new StreamParamError(`port "${v}" must be > 0`);
      ports.push(n);
    }
  }
  return ports;
}
