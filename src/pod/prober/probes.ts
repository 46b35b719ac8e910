// The probe handlers (upstream prober/prober.go + probe/{exec,http,tcp,grpc}): exec through the
// runtime's ExecSync (exit 0 = success), HTTP GET (http.ts), TCP connect, gRPC health (grpc.ts).
// An exec timeout is a failure, as upstream since ExecProbeTimeout; any other ExecSync error is the
// runtime's, not the container's (containerd down, container gone): the outcome is marked `errored`
// and the manager throws it away, as upstream's worker does ("Prober error, throw away the
// result"), so a runtime outage never kills a healthy container.
import { connect } from "node:net";
import { GrpcCode, GrpcError } from "../../cri/grpc.ts";
import type { ExecResult } from "../runtime.ts";
import type { Container, Probe } from "../types.ts";
import { grpcProbe } from "./grpc.ts";
import { httpProbe, probeHeaders } from "./http.ts";
import type { ProbeOutcome } from "./state.ts";

export type ExecSync = (containerId: string, cmd: string[], timeoutMs: number) => Promise<ExecResult>;

export interface ProbeTarget {
  container: Container;
  containerId: string;
  /** Where httpGet/tcpSocket connect when the probe names no host (pod IP, or host IP for hostNetwork). */
  podIP?: string;
}

export type { ProbeOutcome };

/** Upstream remote runtime turns a DeadlineExceeded ExecSync into a timeout error (→ Failure). */
export function isExecTimeout(e: unknown): boolean {
  if (e instanceof GrpcError) return e.code === GrpcCode.DEADLINE_EXCEEDED;
  return /timeout|deadline exceeded/i.test((e as Error)?.message ?? "");
}

/** Resolves a named port against the container's ports (upstream findPortByName). */
export function resolvePort(port: number | string, container: Container): number | undefined {
  if (typeof port === "number") return port;
  if (/^\d+$/.test(port)) return Number(port);
  return container.ports?.find((p) => p.name === port)?.containerPort;
}

export async function runProbe(probe: Probe, target: ProbeTarget, deps: { execSync?: ExecSync; fetch?: typeof fetch }): Promise<ProbeOutcome> {
  const timeoutMs = probe.timeoutSeconds * 1000;
  if (probe.exec) {
    if (!deps.execSync) return { result: "unknown", output: "exec probes need a runtime with ExecSync" };
    try {
      const r = await deps.execSync(target.containerId, probe.exec.command, timeoutMs);
      return { result: r.exitCode === 0 ? "success" : "failure", output: (r.stdout + r.stderr).slice(0, 10_240) };
    } catch (e) {
      const output = `command ${JSON.stringify(probe.exec.command)} failed: ${(e as Error).message}`;
      return isExecTimeout(e) ? { result: "failure", output } : { result: "unknown", output, errored: true };
    }
  }
  if (probe.httpGet) {
    const g = probe.httpGet;
    const port = resolvePort(g.port, target.container);
    const host = g.host || target.podIP;
    if (!port || !host) return { result: "failure", output: `cannot resolve ${!port ? `port ${g.port}` : "host"}` };
    const url = `${g.scheme.toLowerCase()}://${host.includes(":") ? `[${host}]` : host}:${port}${g.path.startsWith("/") ? g.path : `/${g.path}`}`;
    return httpProbe(url, probeHeaders(g.httpHeaders, "kube-probe/1.31"), timeoutMs, deps.fetch);
  }
  if (probe.tcpSocket) {
    const port = resolvePort(probe.tcpSocket.port, target.container);
    const host = probe.tcpSocket.host || target.podIP;
    if (!port || !host) return { result: "failure", output: `cannot resolve ${!port ? `port ${probe.tcpSocket.port}` : "host"}` };
    return tcpConnect(host, port, timeoutMs);
  }
  if (probe.grpc) {
    const host = target.podIP;
    if (!host) return { result: "failure", output: "cannot resolve host: the pod has no IP" };
    return grpcProbe(host, probe.grpc.port, probe.grpc.service ?? "", timeoutMs);
  }
  return { result: "unknown", output: "probe has no handler" };
}

function tcpConnect(host: string, port: number, timeoutMs: number): Promise<ProbeOutcome> {
  return new Promise((resolve) => {
    const sock = connect({ host, port });
    const done = (o: ProbeOutcome) => {
      clearTimeout(timer);
      sock.destroy();
      resolve(o);
    };
    const timer = setTimeout(() => done({ result: "failure", output: `dial tcp ${host}:${port}: i/o timeout` }), timeoutMs);
    sock.once("connect", () => done({ result: "success", output: "" }));
    sock.once("error", (e) => done({ result: "failure", output: `dial tcp ${host}:${port}: ${e.message}` }));
  });
}
