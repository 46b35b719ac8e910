import { describe, expect, test } from "bun:test";
import { createCriClient, isRetryable, retryDelays, socketPathOf } from "../../src/cri/client.ts";
import { createCodec } from "../../src/cri/codec.ts";
import { GrpcCode, GrpcError, type UnaryTransport, frame, grpcTimeout, unframe } from "../../src/cri/grpc.ts";

const codec = createCodec();

/** A transport that answers from a script of results and records the calls. */
function scripted(results: (Uint8Array | GrpcError)[]) {
  const calls: { method: string; deadlineMs: number; request: Uint8Array }[] = [];
  const transport: UnaryTransport = {
    async unary(method, request, deadlineMs) {
      calls.push({ method, request, deadlineMs });
      const r = results.shift();
      if (r === undefined) throw new Error("no scripted reply left");
      if (r instanceof GrpcError) throw r;
      return r;
    },
    close() {},
  };
  return { transport, calls };
}

const versionReply = () => codec.encode("VersionResponse", { version: "0.1.0", runtimeName: "containerd", runtimeVersion: "1.6.20", runtimeApiVersion: "v1" });
const unavailable = () => new GrpcError("/x", GrpcCode.UNAVAILABLE, "connect ENOENT");

describe("socketPathOf", () => {
  test.each([
    ["unix:///run/containerd/containerd.sock", "/run/containerd/containerd.sock"],
    ["/run/x.sock", "/run/x.sock"],
  ])("%s → %s", (endpoint, path) => expect(socketPathOf(endpoint)).toBe(path));

  test.each(["tcp://127.0.0.1:1234", "npipe:////./pipe/x", "relative.sock"])("rejects %s naming it", (endpoint) => {
    expect(() => socketPathOf(endpoint)).toThrow(endpoint);
  });
});

describe("retry", () => {
  test("retryDelays doubles from 50 ms, caps at 1 s, fits the budget", () => {
    expect(retryDelays(0)).toEqual([]);
    expect(retryDelays(400)).toEqual([50, 100, 200]);
    const d = retryDelays(5000);
    expect(d.slice(0, 6)).toEqual([50, 100, 200, 400, 800, 1000]);
    expect(d.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(5000);
  });

  test.each([
    ["UNAVAILABLE", true, new GrpcError("/m", GrpcCode.UNAVAILABLE, "")],
    ["UNKNOWN not initialized", true, new GrpcError("/m", GrpcCode.UNKNOWN, "server is not initialized yet")],
    ["UNKNOWN other", false, new GrpcError("/m", GrpcCode.UNKNOWN, "failed to create containerd task")],
    ["NOT_FOUND", false, new GrpcError("/m", GrpcCode.NOT_FOUND, "not found")],
    ["DEADLINE_EXCEEDED", false, new GrpcError("/m", GrpcCode.DEADLINE_EXCEEDED, "")],
    ["plain Error", false, new Error("plain")],
  ])("isRetryable(%s) = %p", (_label, want, e) => expect(isRetryable(e)).toBe(want));

  test("UNAVAILABLE is retried with backoff until the runtime answers", async () => {
    const { transport, calls } = scripted([unavailable(), unavailable(), versionReply()]);
    const slept: number[] = [];
    const cri = createCriClient({ endpoint: "/x.sock", transport, codec, sleep: async (ms) => void slept.push(ms) });
    expect((await cri.version()).runtimeName).toBe("containerd");
    expect(calls.length).toBe(3);
    expect(slept).toEqual([50, 100]);
    expect(calls[0]?.method).toBe("/runtime.v1.RuntimeService/Version");
  });

  test("gives up with the last error once the budget is spent", async () => {
    const { transport, calls } = scripted([unavailable(), unavailable(), unavailable(), unavailable()]);
    const cri = createCriClient({ endpoint: "/x.sock", transport, codec, retryBudgetMs: 150, sleep: async () => {} });
    const err = await cri.version().catch((e) => e);
    expect(err).toBeInstanceOf(GrpcError);
    expect((err as GrpcError).code).toBe(GrpcCode.UNAVAILABLE);
    expect(calls.length).toBe(3); // first try + 50 ms + 100 ms
  });

  test("other errors are not retried", async () => {
    const { transport, calls } = scripted([new GrpcError("/m", GrpcCode.NOT_FOUND, "container not found")]);
    const cri = createCriClient({ endpoint: "/x.sock", transport, codec, sleep: async () => {} });
    await expect(cri.containerStatus("abc")).rejects.toThrow("container not found");
    expect(calls.length).toBe(1);
  });
});

test("ImageService calls go to the image endpoint's transport when one is given", async () => {
  const runtime = scripted([versionReply()]);
  const images = scripted([codec.encode("ListImagesResponse", { images: [{ id: "sha256:1", repoTags: ["a:1"], size: 5 }] })]);
  const cri = createCriClient({ endpoint: "/r.sock", transport: runtime.transport, imageTransport: images.transport, codec });
  await cri.version();
  expect((await cri.listImages()).map((i) => i.repoTags)).toEqual([["a:1"]]);
  expect(runtime.calls.map((c) => c.method)).toEqual(["/runtime.v1.RuntimeService/Version"]);
  expect(images.calls.map((c) => c.method)).toEqual(["/runtime.v1.ImageService/ListImages"]);
});

describe("deadlines", () => {
  test("every call carries the client timeout; StopContainer and ExecSync add their own timeout", async () => {
    const { transport, calls } = scripted([new Uint8Array(), new Uint8Array(), new Uint8Array()]);
    const cri = createCriClient({ endpoint: "/x.sock", transport, codec, timeoutMs: 1000 });
    await cri.startContainer("a");
    await cri.stopContainer("a", 30);
    await cri.execSync("a", ["true"], 5);
    expect(calls.map((c) => c.deadlineMs)).toEqual([1000, 31_000, 6000]);
    const stopReq = codec.decode<{ containerId: string; timeout: number }>("StopContainerRequest", calls[1]?.request as Uint8Array);
    expect(stopReq).toEqual({ containerId: "a", timeout: 30 });
  });
});

test("ReopenContainerLog calls the RuntimeService method with container_id as field 1", async () => {
  const { transport, calls } = scripted([new Uint8Array()]);
  const cri = createCriClient({ endpoint: "/x.sock", transport, codec });
  await cri.reopenContainerLog("abc");
  expect(calls.map((c) => c.method)).toEqual(["/runtime.v1.RuntimeService/ReopenContainerLog"]);
  // field 1, length-delimited → 0x0a, length 3, "abc" (upstream ReopenContainerLogRequest)
  expect([...(calls[0]!.request as Uint8Array)]).toEqual([0x0a, 3, 0x61, 0x62, 0x63]);
});

describe("codec", () => {
  test("round-trips a sandbox config with enums, maps and nested messages", () => {
    const config = {
      metadata: { name: "web", uid: "u1", namespace: "default", attempt: 2 },
      hostname: "web",
      logDirectory: "/var/log/pods/default_web_u1",
      labels: { "io.kubernetes.pod.uid": "u1" },
      linux: { cgroupParent: "/kubepods/podu1", securityContext: { namespaceOptions: { network: "NODE", pid: "CONTAINER" } } },
    };
    const bytes = codec.encode("RunPodSandboxRequest", { config });
    const back = codec.decode<{ config: typeof config & { linux: { securityContext: { namespaceOptions: Record<string, string> } } } }>(
      "RunPodSandboxRequest",
      bytes,
    );
    expect(back.config.metadata).toEqual(config.metadata);
    expect(back.config.labels).toEqual(config.labels);
    expect(back.config.linux.cgroupParent).toBe("/kubepods/podu1");
    expect(back.config.linux.securityContext.namespaceOptions.network).toBe("NODE");
    expect(back.config.linux.securityContext.namespaceOptions.pid).toBe("CONTAINER");
  });

  test("field numbers match upstream: ContainerStatus.reason is field 10, exit_code field 7", () => {
    // Hand-encoded: field 7 varint 3 → 0x38 0x03; field 10 length-delimited "OOMKilled" → 0x52 len bytes.
    const reason = new TextEncoder().encode("OOMKilled");
    const bytes = new Uint8Array([0x38, 0x03, 0x52, reason.length, ...reason]);
    const st = codec.decode<{ exitCode: number; reason: string; state: string }>("ContainerStatus", bytes);
    expect(st.exitCode).toBe(3);
    expect(st.reason).toBe("OOMKilled");
    expect(st.state).toBe("CONTAINER_CREATED");
  });

  test("rejects a wrongly typed request naming the message", () => {
    expect(() => codec.encode("StopContainerRequest", { containerId: 5 })).toThrow("StopContainerRequest");
  });
});

describe("gRPC framing", () => {
  test.each([
    [0, "1m"],
    [1500.2, "1501m"],
    [120_000, "120000m"],
    [99_999_999, "99999999m"],
    [100_000_000_000, "99999999S"],
    [200_000_000, "200000S"],
  ])("grpc-timeout for %p ms is %s (at most 8 digits)", (ms, want) => expect(grpcTimeout(ms)).toBe(want));

  test("frame prefixes an uncompressed flag and the big-endian length", () => {
    expect([...frame(new Uint8Array([1, 2, 3]))]).toEqual([0, 0, 0, 0, 3, 1, 2, 3]);
  });

  test.each([
    [
      [0, 0, 0, 0, 2, 9, 8],
      [9, 8],
    ],
    [[], []],
  ])("unframe(%p) = %p", (body, msg) => {
    expect([...unframe("/m", new Uint8Array(body))]).toEqual(msg);
  });

  test.each([
    [[0, 0, 0], "short frame"],
    [[1, 0, 0, 0, 1, 5], "compressed"],
    [[0, 0, 0, 0, 9, 1], "truncated"],
  ])("unframe(%p) fails: %s", (body, msg) => {
    expect(() => unframe("/m", new Uint8Array(body))).toThrow(msg);
  });
});
