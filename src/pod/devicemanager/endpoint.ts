// The kubelet's client of one device plugin (upstream plugin/v1beta1/client.go + endpoint.go): its
// unary calls on the repo's gRPC transport (src/cri/grpc.ts), and ListAndWatch — a server-streaming
// call — on node:http2, each message handed over as it arrives. The stream's end (the plugin stopped,
// its socket gone) is reported once through onEnd.
import { readFileSync } from "node:fs";
import http2 from "node:http2";
import net from "node:net";
import { createUnixGrpcTransport, GrpcCode, GrpcError, MAX_RECV_MESSAGE_BYTES } from "../../cri/grpc.ts";
import { protoCodec } from "../../cri/grpc-server.ts";
import apiProtoPath from "./api.proto" with { type: "file" };
import type { ContainerAllocateResponse, DevicePluginOptions, PluginDevice } from "./types.ts";

const SERVICE = "/v1beta1.DevicePlugin";
/** Upstream's deadline of a plugin's unary calls (endpoint.go: allocate and the others use 10 s). */
const CALL_TIMEOUT_MS = 10_000;

export const devicePluginCodec = () => protoCodec(readFileSync(apiProtoPath, "utf8"), "v1beta1");

export interface PluginEndpoint {
  readonly resourceName: string;
  readonly socketPath: string;
  getDevicePluginOptions(): Promise<DevicePluginOptions>;
  /** Starts the stream; each device list goes to onDevices, its end (for whatever reason) to onEnd. */
  listAndWatch(onDevices: (devices: PluginDevice[]) => void, onEnd: (error?: Error) => void): void;
  getPreferredAllocation(available: string[], mustInclude: string[], size: number): Promise<string[]>;
  allocate(deviceIds: string[]): Promise<ContainerAllocateResponse>;
  preStartContainer(deviceIds: string[]): Promise<void>;
  close(): void;
}

/** Splits a byte stream into gRPC messages; returns the bytes still waiting for the rest of a message. */
export function takeMessages(buffer: Buffer, onMessage: (m: Uint8Array) => void): Buffer {
  let b = buffer;
  while (b.length >= 5) {
    if (b[0] !== 0) throw new GrpcError("ListAndWatch", GrpcCode.INTERNAL, "compressed reply not supported");
    const len = b.readUInt32BE(1);
    if (len > MAX_RECV_MESSAGE_BYTES) throw new GrpcError("ListAndWatch", GrpcCode.RESOURCE_EXHAUSTED, `message of ${len} bytes`);
    if (b.length < 5 + len) break;
    onMessage(b.subarray(5, 5 + len));
    b = b.subarray(5 + len);
  }
  return b;
}

export function createPluginEndpoint(resourceName: string, socketPath: string): PluginEndpoint {
  const codec = devicePluginCodec();
  const transport = createUnixGrpcTransport(socketPath);
  let session: http2.ClientHttp2Session | undefined;
  const unary = async <T>(method: string, reqType: string, req: object, resType: string): Promise<T> =>
    codec.decode<T>(resType, await transport.unary(`${SERVICE}/${method}`, codec.encode(reqType, req), CALL_TIMEOUT_MS));

  function listAndWatch(onDevices: (d: PluginDevice[]) => void, onEnd: (e?: Error) => void): void {
    let ended = false;
    const end = (e?: Error) => {
      if (ended) return;
      ended = true;
      session?.destroy();
      onEnd(e);
    };
    const s = http2.connect("http://localhost", { createConnection: () => net.connect(socketPath) });
    session = s;
    s.on("error", (e) => end(e));
    s.on("close", () => end());
    const stream = s.request({ ":method": "POST", ":path": `${SERVICE}/ListAndWatch`, "content-type": "application/grpc", te: "trailers" });
    let pending: Buffer = Buffer.alloc(0);
    stream.on("data", (c: Buffer) => {
      try {
        pending = takeMessages(Buffer.concat([pending, c]), (m) => onDevices(codec.decode<{ devices: PluginDevice[] }>("ListAndWatchResponse", m).devices));
      } catch (e) {
        end(e as Error);
      }
    });
    const status = (h: http2.IncomingHttpHeaders) => {
      const st = h["grpc-status"];
      if (st !== undefined && st !== "0") end(new GrpcError("ListAndWatch", Number(st), decodeURIComponent(String(h["grpc-message"] ?? ""))));
    };
    stream.on("response", status);
    stream.on("trailers", status);
    stream.on("error", (e) => end(e));
    stream.on("close", () => end());
    stream.end(Buffer.from([0, 0, 0, 0, 0])); // Empty
  }

  return {
    resourceName,
    socketPath,
    getDevicePluginOptions: () => unary<DevicePluginOptions>("GetDevicePluginOptions", "Empty", {}, "DevicePluginOptions"),
    listAndWatch,
    async getPreferredAllocation(available, mustInclude, size) {
      const r = await unary<{ containerResponses: { deviceIDs: string[] }[] }>(
        "GetPreferredAllocation",
        "PreferredAllocationRequest",
        { containerRequests: [{ availableDeviceIDs: available, mustIncludeDeviceIDs: mustInclude, allocationSize: size }] },
        "PreferredAllocationResponse",
      );
      return r.containerResponses[0]?.deviceIDs ?? [];
    },
    async allocate(deviceIds) {
      const r = await unary<{ containerResponses: ContainerAllocateResponse[] }>(
        "Allocate",
        "AllocateRequest",
        { containerRequests: [{ devicesIds: deviceIds }] },
        "AllocateResponse",
      );
      const first = r.containerResponses[0];
      if (!first) throw new Error(`no containers return in allocation response ${JSON.stringify(r)}`);
      return first;
    },
    async preStartContainer(deviceIds) {
      await unary("PreStartContainer", "PreStartContainerRequest", { devicesIds: deviceIds }, "PreStartContainerResponse");
    },
    close() {
      session?.destroy();
      transport.close();
    },
  };
}
