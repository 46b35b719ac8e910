// Registering and unregistering one plugin socket (upstream operationexecutor/operation_generator.go):
// GetInfo on the socket's Registration service, the handler of the plugin's type validates and
// registers it, and the plugin is told the outcome (NotifyRegistrationStatus) with upstream's texts.
// The plugin is in the actual state of world before its handler's registerPlugin runs, so a socket
// removed meanwhile is unregistered.
import { kv, log } from "../../log.ts";
import type { ActualStateOfWorld } from "./cache.ts";
import type { DialRegistration, PluginHandler, RegisteredPlugin, RegistrationClient } from "./types.ts";

/** Upstream dialTimeoutDuration, GetInfo's timeout and notifyTimeoutDuration. */
export const DIAL_TIMEOUT_MS = 10_000;
export const GET_INFO_TIMEOUT_MS = 1_000;
export const NOTIFY_TIMEOUT_MS = 5_000;

export interface RegisterPluginInput {
  socketPath: string;
  uuid: string;
  handlers: ReadonlyMap<string, PluginHandler>;
  asw: ActualStateOfWorld;
  dial: DialRegistration;
}

/** Tells the plugin the outcome; throws errStr when it is an error (upstream notifyPlugin). */
async function notifyPlugin(client: RegistrationClient, registered: boolean, errStr: string): Promise<void> {
  try {
    await client.notifyRegistrationStatus(registered, errStr, NOTIFY_TIMEOUT_MS);
  } catch (e) {
    throw new Error(`${errStr}: ${(e as Error).message}`);
  }
  if (errStr !== "") throw new Error(errStr);
}

/**
 * Sends errStr to the plugin. notifyPlugin fails for every non-empty errStr, so upstream's caller always
 * returns "failed to send error at socket …" wrapping it (with the RPC's error when the send failed).
 */
async function refuse(client: RegistrationClient, socketPath: string, errStr: string): Promise<never> {
  try {
    await notifyPlugin(client, false, errStr);
  } catch (e) {
    throw new Error(`RegisterPlugin error -- failed to send error at socket ${socketPath}, err: ${(e as Error).message}`);
  }
  throw new Error(errStr);
}

export async function registerPlugin(i: RegisterPluginInput): Promise<void> {
  const { socketPath, asw } = i;
  let client: RegistrationClient;
  try {
    client = await i.dial(socketPath, DIAL_TIMEOUT_MS);
  } catch (e) {
    throw new Error(`RegisterPlugin error -- dial failed at socket ${socketPath}, err: failed to dial socket ${socketPath}, err: ${(e as Error).message}`);
  }
  try {
    let info: Awaited<ReturnType<RegistrationClient["getInfo"]>>;
    try {
      info = await client.getInfo(GET_INFO_TIMEOUT_MS);
    } catch (e) {
      throw new Error(`RegisterPlugin error -- failed to get plugin info using RPC GetInfo at socket ${socketPath}, err: ${(e as Error).message}`);
    }
    const handler = i.handlers.get(info.type);
    if (!handler)
      return await refuse(client, socketPath, `RegisterPlugin error -- no handler registered for plugin type: ${info.type} at socket ${socketPath}`);
    const endpoint = info.endpoint === "" ? socketPath : info.endpoint;
    try {
      await handler.validatePlugin(info.name, endpoint, info.supportedVersions);
    } catch (e) {
      return await refuse(client, socketPath, `RegisterPlugin error -- plugin validation failed with err: ${(e as Error).message}`);
    }
    // In the actual state before the handler registers it, so that a delete meanwhile unregisters it.
    asw.addPlugin({ socketPath, uuid: i.uuid, handler, name: info.name, endpoint });
    try {
      await handler.registerPlugin(info.name, endpoint, info.supportedVersions);
    } catch (e) {
      asw.removePlugin(socketPath);
      return await notifyPlugin(client, false, `RegisterPlugin error -- plugin registration failed with err: ${(e as Error).message}`);
    }
    try {
      await notifyPlugin(client, true, "");
    } catch (e) {
      asw.removePlugin(socketPath);
      await handler.deRegisterPlugin(info.name, endpoint);
      throw new Error(`RegisterPlugin error -- failed to send registration status at socket ${socketPath}, err: ${(e as Error).message}`);
    }
    log.info(`plugin registered ${kv({ type: info.type, name: info.name, endpoint, socketPath })}`);
  } finally {
    client.close();
  }
}

/** Upstream GenerateUnregisterPluginFunc: out of the actual state first, then the handler's deRegisterPlugin. */
export async function unregisterPlugin(p: RegisteredPlugin, asw: ActualStateOfWorld): Promise<void> {
  asw.removePlugin(p.socketPath);
  await p.handler.deRegisterPlugin(p.name, p.endpoint);
  log.info(`plugin unregistered ${kv({ name: p.name, endpoint: p.endpoint, socketPath: p.socketPath })}`);
}
