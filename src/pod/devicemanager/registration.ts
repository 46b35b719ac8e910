// The device plugin registration service, v1beta1.Registration on <rootDir>/device-plugins/kubelet.sock
// (upstream plugin/v1beta1/server.go Register): the version must be v1beta1, the resource name an
// extended resource name, the endpoint a socket in the same directory. The registration is answered
// once the kubelet has connected to the plugin (GetDevicePluginOptions) and started its ListAndWatch.
import { readFileSync } from "node:fs";
import path from "node:path";
import { createUnaryGrpcServer, protoCodec, type UnaryGrpcServer } from "../../cri/grpc-server.ts";
import { kv, log } from "../../log.ts";
import apiProtoPath from "./api.proto" with { type: "file" };
import { isExtendedResourceName } from "./resource-name.ts";
import type { DevicePluginOptions } from "./types.ts";

/** Upstream pluginapi.Version / SupportedVersions. */
export const DEVICE_PLUGIN_VERSION = "v1beta1";
export const SUPPORTED_VERSIONS = [DEVICE_PLUGIN_VERSION];
/** Upstream pluginapi.KubeletSocket's name, in <rootDir>/device-plugins. */
export const KUBELET_SOCKET = "kubelet.sock";

export const devicePluginsDir = (rootDir: string) => path.join(rootDir, "device-plugins");

export interface RegisterRequest {
  version: string;
  endpoint: string;
  resourceName: string;
  options?: DevicePluginOptions | null;
}

/** Go's %q of a string slice: ["v1beta1"]. */
const goQuotedList = (v: string[]) => `[${v.map((s) => JSON.stringify(s)).join(" ")}]`;

/** Upstream Register's checks: the error text it returns, or undefined when the request is valid. */
export function registrationError(r: RegisterRequest): string | undefined {
  if (!SUPPORTED_VERSIONS.includes(r.version))
    return `requested API version ${JSON.stringify(r.version)} is not supported by kubelet. Supported version is ${goQuotedList(SUPPORTED_VERSIONS)}`;
  if (!isExtendedResourceName(r.resourceName)) return `the ResourceName ${JSON.stringify(r.resourceName)} is invalid`;
  return undefined;
}

/** Connects to the plugin at the socket; throws when it cannot (the registration fails with that error). */
export type ConnectPlugin = (resourceName: string, socketPath: string, options: DevicePluginOptions | undefined) => Promise<void>;

export function createRegistrationServer(rootDir: string, connect: ConnectPlugin): UnaryGrpcServer {
  const dir = devicePluginsDir(rootDir);
  return createUnaryGrpcServer({
    socketPath: path.join(dir, KUBELET_SOCKET),
    service: "v1beta1.Registration",
    codec: protoCodec(readFileSync(apiProtoPath, "utf8"), "v1beta1"),
    handlers: {
      Register: {
        request: "RegisterRequest",
        response: "Empty",
        call: async (req) => {
          const r = req as unknown as RegisterRequest;
          log.info(`Got registration request from device plugin with resource ${kv({ resourceName: r.resourceName, endpoint: r.endpoint })}`);
          const invalid = registrationError(r);
          if (invalid) {
            log.error(`Bad registration request from device plugin ${kv({ resourceName: r.resourceName, error: invalid })}`);
            throw new Error(invalid);
          }
          // The endpoint is a socket name in the plugins' directory (upstream filepath.Join(socketDir, endpoint)).
          await connect(r.resourceName, path.join(dir, r.endpoint), r.options ?? undefined);
          return {};
        },
      },
    },
    // Upstream returns plain errors, which gRPC reports as code Unknown.
    errorStatus: (e) => ({ code: 2, message: e.message }),
  });
}
