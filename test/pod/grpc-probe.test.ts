// gRPC probes (src/pod/prober/grpc.ts) against a real HTTP/2 gRPC health server on loopback.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { frame, unframe } from "../../src/cri/grpc.ts";
import { decodeHealthCheckStatus, encodeHealthCheckRequest, grpcProbe } from "../../src/pod/prober/grpc.ts";

// service name → reply: a ServingStatus number, a gRPC error code as "code:N", or "hang".
const replies: Record<string, string | number> = { "": 1, down: 2, unimpl: "code:12", slow: "hang" };
const seen: { service: string; ua: string }[] = [];
let server: http2.Http2Server;
let port: number;

function serviceOf(body: Buffer): string {
  const msg = unframe("x", body);
  return msg.length ? new TextDecoder().decode(msg.subarray(2)) : "";
}

beforeAll(async () => {
  server = http2.createServer();
  server.on("stream", (stream: http2.ServerHttp2Stream, headers) => {
    const chunks: Buffer[] = [];
    stream.on("data", (c: Buffer) => chunks.push(c));
    stream.on("end", () => {
      const service = serviceOf(Buffer.concat(chunks));
      seen.push({ service, ua: String(headers["user-agent"]) });
      const r = replies[service] ?? 3;
      if (r === "hang") return;
      if (typeof r === "string") {
        stream.respond(
          { ":status": 200, "content-type": "application/grpc", "grpc-status": r.slice(5), "grpc-message": "unknown service grpc.health.v1.Health" },
          { endStream: true },
        );
        return;
      }
      stream.respond({ ":status": 200, "content-type": "application/grpc" }, { waitForTrailers: true });
      stream.on("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }));
      stream.end(frame(new Uint8Array([0x08, r])));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => server.close());

describe("grpc probe", () => {
  test.each([
    ["SERVING", "", "success", "service healthy"],
    ["NOT_SERVING", "down", "failure", 'service unhealthy (responded with "NOT_SERVING")'],
    ["unknown service", "other", "failure", 'service unhealthy (responded with "SERVICE_UNKNOWN")'],
    [
      "no health service",
      "unimpl",
      "failure",
      "error: this server does not implement the grpc health protocol (grpc.health.v1.Health): unknown service grpc.health.v1.Health",
    ],
    ["timeout", "slow", "failure", "timeout: health rpc did not complete within 300ms"],
  ])("%s", async (_n, service, result, output) => {
    expect(await grpcProbe("127.0.0.1", port, service, 300)).toEqual({ result: result as "success", output });
  });

  test("sends the service name and kube-probe's user agent", async () => {
    await grpcProbe("127.0.0.1", port, "down", 1000);
    expect(seen.at(-1)).toEqual({ service: "down", ua: "kube-probe/1.31" });
  });

  test("nothing listening: failed to connect", async () => {
    const out = await grpcProbe("127.0.0.1", 1, "", 1000);
    expect(out.result).toBe("failure");
    expect(out.output).toStartWith('error: failed to connect service at "127.0.0.1:1"');
  });

  test("codec", () => {
    expect([...encodeHealthCheckRequest("ab")]).toEqual([0x0a, 2, 97, 98]);
    expect(encodeHealthCheckRequest("").length).toBe(0);
    expect(decodeHealthCheckStatus(new Uint8Array([0x08, 1]))).toBe(1);
    expect(decodeHealthCheckStatus(new Uint8Array())).toBe(0);
  });
});
