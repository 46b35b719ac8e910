// A device plugin for tests: the v1beta1.DevicePlugin service on a unix socket (node:http2), with
// ListAndWatch kept open so devices can be changed, and calls recorded. Its Allocate answers one env
// (DEVICES=<ids>) and one mount per device (/tmp/<id>), as upstream's sample plugin mounts its files.
import { rmSync } from "node:fs";
import http2 from "node:http2";
import { frame, unframe } from "../../src/cri/grpc.ts";
import { devicePluginCodec } from "../../src/pod/devicemanager/endpoint.ts";
import type { PluginDevice } from "../../src/pod/devicemanager/types.ts";

export interface FakeDevicePlugin {
  readonly socketPath: string;
  calls: string[];
  setDevices(devices: PluginDevice[]): void;
  start(): Promise<void>;
  /** Closes the socket and every stream (the plugin went away). */
  stop(): Promise<void>;
}

export function createFakeDevicePlugin(socketPath: string, opts: { devices: PluginDevice[]; preferred?: boolean; preStart?: boolean }): FakeDevicePlugin {
  const codec = devicePluginCodec();
  let devices = opts.devices;
  const watchers = new Set<http2.ServerHttp2Stream>();
  const sessions = new Set<http2.ServerHttp2Session>();
  const calls: string[] = [];
  const server = http2.createServer();
  server.on("session", (s) => {
    sessions.add(s);
    s.on("close", () => sessions.delete(s));
  });
  const reply = (stream: http2.ServerHttp2Stream, type: string, value: object) => {
    stream.respond({ ":status": 200, "content-type": "application/grpc" }, { waitForTrailers: true });
    stream.on("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }));
    stream.end(frame(codec.encode(type, value)));
  };
  const unary: Record<string, (req: any) => [string, object]> = {
    GetDevicePluginOptions: () => [
      "DevicePluginOptions",
      { preStartRequired: opts.preStart === true, getPreferredAllocationAvailable: opts.preferred === true },
    ],
    // Prefers the last available device, so a test sees the preference taken.
    GetPreferredAllocation: (r) => {
      const c = r.containerRequests[0];
      return ["PreferredAllocationResponse", { containerResponses: [{ deviceIDs: c.availableDeviceIDs.slice(-c.allocationSize) }] }];
    },
    Allocate: (r) => {
      const ids: string[] = r.containerRequests[0].devicesIds;
      return [
        "AllocateResponse",
        { containerResponses: [{ envs: { DEVICES: ids.join(",") }, mounts: ids.map((id) => ({ containerPath: `/tmp/${id}`, hostPath: `/tmp/${id}` })) }] },
      ];
    },
    PreStartContainer: () => ["PreStartContainerResponse", {}],
  };
  const requestTypes: Record<string, string> = {
    GetDevicePluginOptions: "Empty",
    GetPreferredAllocation: "PreferredAllocationRequest",
    Allocate: "AllocateRequest",
    PreStartContainer: "PreStartContainerRequest",
  };
  server.on("stream", (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders) => {
    const method = String(headers[":path"]).split("/")[2] ?? "";
    const chunks: Buffer[] = [];
    stream.on("error", () => {});
    if (method === "ListAndWatch") {
      calls.push(method);
      watchers.add(stream);
      stream.on("close", () => watchers.delete(stream));
      stream.respond({ ":status": 200, "content-type": "application/grpc" });
      stream.write(frame(codec.encode("ListAndWatchResponse", { devices })));
      return;
    }
    stream.on("data", (c: Buffer) => chunks.push(c));
    stream.on("end", () => {
      const req = codec.decode<Record<string, unknown>>(requestTypes[method] ?? "Empty", unframe(method, Buffer.concat(chunks)));
      calls.push(`${method} ${JSON.stringify(req)}`);
      const [type, value] = unary[method]!(req);
      reply(stream, type, value);
    });
  });
  return {
    socketPath,
    calls,
    setDevices(d) {
      devices = d;
      for (const w of watchers) w.write(frame(codec.encode("ListAndWatchResponse", { devices })));
    },
    start: () => new Promise<void>((resolve) => server.listen(socketPath, () => resolve())),
    async stop() {
      const closed = new Promise<void>((r) => server.close(() => r()));
      for (const s of sessions) s.destroy();
      await closed;
      rmSync(socketPath, { force: true });
    },
  };
}
