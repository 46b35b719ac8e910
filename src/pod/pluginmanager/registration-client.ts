// The kubelet's client of a plugin's Registration service (pluginregistration.Registration, upstream
// operation_generator.go dial + registerapi.RegistrationClient), on the repo's gRPC transport.
// Dialing connects once first, as upstream's blocking dial does, so an unreachable socket fails there.
import net from "node:net";
import { readFileSync } from "node:fs";
import { createUnixGrpcTransport } from "../../cri/grpc.ts";
import { protoCodec, type ProtoCodec } from "../../cri/grpc-server.ts";
import apiProtoPath from "./api.proto" with { type: "file" };
import type { DialRegistration, PluginInfo } from "./types.ts";

const SERVICE = "/pluginregistration.Registration";

/** The codec of package pluginregistration (also the test plugins' side). */
export const registrationCodec = (): ProtoCodec => protoCodec(readFileSync(apiProtoPath, "utf8"), "pluginregistration");

/** Connects to the socket and closes again; rejects when nothing accepts within timeoutMs. */
export function probeSocket(socketPath: string, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const s = net.connect(socketPath);
    const timer = setTimeout(() => {
      s.destroy();
      reject(new Error("context deadline exceeded"));
    }, timeoutMs);
    s.once("connect", () => {
      clearTimeout(timer);
      s.destroy();
      resolve();
    });
    s.once("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
  });
}

export const dialRegistration: DialRegistration = async (socketPath, timeoutMs) => {
  await probeSocket(socketPath, timeoutMs);
  const codec = registrationCodec();
  const transport = createUnixGrpcTransport(socketPath);
  return {
    async getInfo(ms) {
      const reply = await transport.unary(`${SERVICE}/GetInfo`, codec.encode("InfoRequest", {}), ms);
      return codec.decode<PluginInfo>("PluginInfo", reply);
    },
    async notifyRegistrationStatus(registered, error, ms) {
      await transport.unary(`${SERVICE}/NotifyRegistrationStatus`, codec.encode("RegistrationStatus", { pluginRegistered: registered, error }), ms);
    },
    close: () => transport.close(),
  };
};
