import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { createCodec } from "../../src/cri/codec.ts";
import { createContainerdClient, WRITE_CALL_BYTES, WRITE_MESSAGE_BYTES } from "../../src/cri/containerd.ts";
import containerdProtoPath from "../../src/cri/containerd.proto" with { type: "file" };
import { frameAll, GrpcCode, GrpcError, type GrpcMetadata, type StreamingTransport, unframeAll } from "../../src/cri/grpc.ts";

const codec = createCodec(readFileSync(containerdProtoPath, "utf8"), { packageName: "containerd.bunlet" });

interface Call {
  method: string;
  messages: Record<string, unknown>[];
  metadata: GrpcMetadata;
}

/** A transport that records the calls and answers as `answer` says. */
function fakeTransport(answer: (call: Call) => Uint8Array[] | GrpcError = () => []) {
  const calls: Call[] = [];
  const type = (method: string) =>
    method.endsWith("/Write")
      ? "WriteContentRequest"
      : method.endsWith("Leases/Create")
        ? "LeaseCreateRequest"
        : method.endsWith("Leases/Delete")
          ? "LeaseDeleteRequest"
          : `${method.split("/").pop()}${method.includes("Images") ? "ImageRequest" : "Request"}`;
  const record = (method: string, bytes: readonly Uint8Array[], metadata: GrpcMetadata = []) => {
    const call = { method, messages: bytes.map((b) => codec.decode<Record<string, unknown>>(type(method), b)), metadata };
    calls.push(call);
    const r = answer(call);
    if (r instanceof GrpcError) throw r;
    return r;
  };
  const transport: StreamingTransport = {
    unary: async (method, request, _d, _s, metadata) => record(method, [request], metadata)[0] ?? new Uint8Array(),
    sendAll: async (method, requests, _d, metadata) => record(method, requests, metadata),
    close() {},
  };
  return { transport, calls };
}

describe("gRPC framing of a streamed call", () => {
  test("frameAll and unframeAll are inverse, empty messages included", () => {
    const msgs = [new Uint8Array([1, 2, 3]), new Uint8Array(), new Uint8Array(300).fill(7)];
    expect(unframeAll("/x", frameAll(msgs))).toEqual(msgs);
  });
});

describe("createContainerdClient", () => {
  test("writeBlob: calls of at most WRITE_CALL_BYTES, messages at their offsets, the last one commits with digest and labels", async () => {
    const { transport, calls } = fakeTransport();
    const client = createContainerdClient({ endpoint: "/nonexistent.sock", transport });
    const size = WRITE_CALL_BYTES + WRITE_MESSAGE_BYTES + 10;
    const blob = new Uint8Array(size).map((_, i) => i % 251);
    const desc = { mediaType: "application/vnd.oci.image.layer.v1.tar", digest: "sha256:abc", size };
    await client.writeBlob("ref-1", desc, async (o, n) => blob.subarray(o, o + n), "lease-1", { "containerd.io/gc.ref.content.l.0": "sha256:x" });
    expect(calls.map((c) => c.method)).toEqual(["/containerd.services.content.v1.Content/Write", "/containerd.services.content.v1.Content/Write"]);
    expect(calls[0]!.metadata).toEqual([
      ["containerd-namespace", "k8s.io"],
      ["containerd-lease", "lease-1"],
    ]);
    const all = calls.flatMap((c) => c.messages);
    const writes = all.filter((m) => m.action === "WRITE");
    expect(writes.map((m) => m.offset)).toEqual([...Array(10).keys()].map((i) => i * WRITE_MESSAGE_BYTES));
    const joined = new Uint8Array(size);
    for (const w of writes) joined.set(w.data as Uint8Array, w.offset as number);
    expect(joined).toEqual(blob);
    expect(all.at(-1)).toMatchObject({
      action: "COMMIT",
      ref: "ref-1",
      offset: size,
      total: size,
      expected: "sha256:abc",
      labels: { "containerd.io/gc.ref.content.l.0": "sha256:x" },
    });
    expect(calls[0]!.messages.every((m) => m.ref === "ref-1")).toBe(true);
  });

  test("writeBlob: ALREADY_EXISTS (the same blob committed meanwhile) is success; other errors are not", async () => {
    const exists = createContainerdClient({
      endpoint: "/x",
      transport: fakeTransport(() => new GrpcError("Write", GrpcCode.ALREADY_EXISTS, "exists")).transport,
    });
    await exists.writeBlob("r", { mediaType: "m", digest: "sha256:a", size: 3 }, async () => new Uint8Array(3), "l");
    const broken = createContainerdClient({
      endpoint: "/x",
      transport: fakeTransport(() => new GrpcError("Write", GrpcCode.INVALID_ARGUMENT, "digest mismatch")).transport,
    });
    await expect(broken.writeBlob("r", { mediaType: "m", digest: "sha256:a", size: 3 }, async () => new Uint8Array(3), "l")).rejects.toThrow("digest mismatch");
  });

  test("contentInfo and getImage: NOT_FOUND is null", async () => {
    const client = createContainerdClient({ endpoint: "/x", transport: fakeTransport(() => new GrpcError("Info", GrpcCode.NOT_FOUND, "not found")).transport });
    expect(await client.contentInfo("sha256:a")).toBeNull();
    expect(await client.getImage("docker.io/library/a:1")).toBeNull();
  });

  test("putImage: Create, then Update when the name exists", async () => {
    const { transport, calls } = fakeTransport((c) =>
      c.method.endsWith("/Create") ? new GrpcError("Create", GrpcCode.ALREADY_EXISTS, "image exists") : [codec.encode("UpdateImageResponse", {})],
    );
    const client = createContainerdClient({ endpoint: "/x", transport });
    const image = { name: "docker.io/library/a:1", labels: { "io.cri-containerd.pinned": "pinned" }, target: { mediaType: "m", digest: "sha256:m", size: 9 } };
    await client.putImage(image, "lease-2");
    expect(calls.map((c) => c.method.split("/").pop())).toEqual(["Create", "Update"]);
    expect(calls[1]!.messages[0]).toMatchObject({ image: { name: image.name, labels: image.labels, target: { digest: "sha256:m", size: 9 } } });
  });

  test("createLease: expires by itself (containerd.io/gc.expire)", async () => {
    const { transport, calls } = fakeTransport(() => [codec.encode("LeaseCreateResponse", { lease: { id: "l1" } })]);
    const client = createContainerdClient({ endpoint: "/x", transport });
    expect(await client.createLease("l1", 3_600_000, Date.UTC(2030, 0, 1))).toBe("l1");
    expect(calls[0]!.messages[0]).toEqual({ id: "l1", labels: { "containerd.io/gc.expire": "2030-01-01T01:00:00.000Z" } });
  });
});
