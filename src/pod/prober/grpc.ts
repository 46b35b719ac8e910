// gRPC probes (upstream pkg/probe/grpc): one grpc.health.v1.Health/Check call to the pod IP and the
// probe's port over plaintext HTTP/2, service name as given ("" = the whole server). SERVING is
// success; anything else, an error status or a timeout is a failure with upstream's message. Uses
// the project's node:http2 framing (src/cri/grpc.ts), so no gRPC library is needed.
import http2 from "node:http2";
import { frame, grpcTimeout, unframe } from "../../cri/grpc.ts";
import type { ProbeOutcome } from "./state.ts";

const METHOD = "/grpc.health.v1.Health/Check";
const SERVING_STATUS = ["UNKNOWN", "SERVING", "NOT_SERVING", "SERVICE_UNKNOWN"];

/** HealthCheckRequest{service}: field 1, length-delimited. */
export function encodeHealthCheckRequest(service: string): Uint8Array {
  const s = new TextEncoder().encode(service);
  if (s.length === 0) return new Uint8Array();
  const len: number[] = [];
  let n = s.length;
  while (n > 0x7f) {
    len.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  len.push(n);
  return new Uint8Array([0x0a, ...len, ...s]);
}

/** HealthCheckResponse.status (field 1, varint); 0 (UNKNOWN) when absent. */
export function decodeHealthCheckStatus(msg: Uint8Array): number {
  for (let i = 0; i < msg.length; ) {
    const key = msg[i++] as number;
    let v = 0;
    let shift = 0;
    if ((key & 7) === 0) {
      for (;;) {
        const b = msg[i++] as number;
        v |= (b & 0x7f) << shift;
        shift += 7;
        if (!(b & 0x80) || i >= msg.length) break;
      }
      if (key >> 3 === 1) return v;
    } else if ((key & 7) === 2) {
      let l = 0;
      for (;;) {
        const b = msg[i++] as number;
        l |= (b & 0x7f) << shift;
        shift += 7;
        if (!(b & 0x80)) break;
      }
      i += l;
    } else return 0;
  }
  return 0;
}

const goDuration = (ms: number) => (ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`);

export function grpcProbe(host: string, port: number, service: string, timeoutMs: number): Promise<ProbeOutcome> {
  const addr = `${host.includes(":") ? `[${host}]` : host}:${port}`;
  return new Promise((resolve) => {
    let done = false;
    let connected = false;
    const chunks: Buffer[] = [];
    let status: number | undefined;
    let message = "";
    const session = http2.connect(`http://${addr}`);
    const finish = (o: ProbeOutcome) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      session.destroy();
      resolve(o);
    };
    const timer = setTimeout(
      () =>
        finish({
          result: "failure",
          output: connected
            ? `timeout: health rpc did not complete within ${goDuration(timeoutMs)}`
            : `timeout: failed to connect service "${addr}" within ${goDuration(timeoutMs)}: context deadline exceeded`,
        }),
      timeoutMs,
    );
    session.on("error", (e) => finish({ result: "failure", output: `error: failed to connect service at "${addr}": ${e.message}` }));
    session.on("connect", () => (connected = true));
    const stream = session.request({
      ":method": "POST",
      ":path": METHOD,
      "content-type": "application/grpc",
      te: "trailers",
      "grpc-timeout": grpcTimeout(timeoutMs),
      "user-agent": "kube-probe/1.31",
    });
    const readStatus = (h: http2.IncomingHttpHeaders) => {
      if (h["grpc-status"] !== undefined) {
        status = Number(h["grpc-status"]);
        message = decodeURIComponent(String(h["grpc-message"] ?? ""));
      }
    };
    stream.on("response", readStatus);
    stream.on("trailers", readStatus);
    stream.on("data", (c: Buffer) => chunks.push(c));
    stream.on("error", () => undefined); // the session's error reports it
    stream.on("close", () => {
      if (done) return;
      if (status === undefined) return finish({ result: "failure", output: `error: health rpc probe failed: connection closed before a reply` });
      if (status === 12)
        return finish({ result: "failure", output: `error: this server does not implement the grpc health protocol (grpc.health.v1.Health): ${message}` });
      if (status !== 0) return finish({ result: "failure", output: `error: health rpc probe failed: rpc error: code = ${status} desc = ${message}` });
      let st: number;
      try {
        st = decodeHealthCheckStatus(unframe(METHOD, Buffer.concat(chunks)));
      } catch (e) {
        return finish({ result: "failure", output: `error: health rpc probe failed: ${(e as Error).message}` });
      }
      if (st !== 1) return finish({ result: "failure", output: `service unhealthy (responded with "${SERVING_STATUS[st] ?? st}")` });
      finish({ result: "success", output: "service healthy" });
    });
    stream.end(frame(encodeHealthCheckRequest(service)));
  });
}
