// The D-Bus system bus for bunlet's two clients — systemd for the systemd cgroup driver
// (systemd-dbus.ts) and logind for graceful node shutdown (node/shutdown/logind.ts) — as upstream's
// godbus connection: a client on the bus socket, a method call as a promise, the bus daemon's AddMatch.
// Transport: @homebridge/dbus-native (pure JS, EXTERNAL auth); why: docs/adr/0009-systemd-over-dbus.md.
import type { EventEmitter } from "node:events";

export const SYSTEM_BUS_SOCKET = "/run/dbus/system_bus_socket";

/** A D-Bus error: the message names the call, `dbusName` is the error's D-Bus name (org.freedesktop.systemd1.NoSuchUnit). */
export class DBusError extends Error {
  constructor(
    message: string,
    readonly dbusName?: string,
  ) {
    super(message);
    this.name = "DBusError";
  }
}

/** The part of dbus-native's MessageBus used here (its index.d.ts omits createClient). */
export interface Bus {
  invoke(msg: Record<string, unknown>, cb: (err: { name?: string; message?: unknown } | undefined, ...res: unknown[]) => void): void;
  /** Emits "connect" once authenticated, "message" for each message, "error" and "end". */
  connection: EventEmitter & { end(): void };
}

/** A message as dbus-native hands it to "message" listeners (type 4: a signal). */
export interface BusMessage {
  type?: number;
  path?: string;
  interface?: string;
  member?: string;
  sender?: string;
  body?: unknown;
}

type DBusNative = { createClient(o: { socket: string; authMethods: string[] }): Bus };
/**
 * Loaded on the first D-Bus call: only the systemd cgroup driver and graceful shutdown need it, and its
 * module tree (xml2js, sax, event-stream) costs ≈ 1.7 MB of heap and 6 MB of mapped code once loaded
 * (docs/adr/0009-systemd-over-dbus.md).
 */
const loadDBus = async (): Promise<DBusNative> => (await import("@homebridge/dbus-native")).default as unknown as DBusNative;

/** A client of the bus at `socket`, connecting (it emits "connect" once it is up). A failure to create it rejects. */
export async function createBusClient(socket: string): Promise<Bus> {
  return (await loadDBus()).createClient({ socket, authMethods: ["EXTERNAL"] });
}

/** A method call; an error reply rejects with `error(message, dbusName)`, the message naming the member. */
export function callMethod(bus: Bus, msg: Record<string, unknown>, error: new (message: string, dbusName?: string) => Error): Promise<unknown[]> {
  return new Promise((resolve, reject) => {
    bus.invoke(msg, (err, ...res) => {
      if (err) reject(new error(`D-Bus ${String(msg.member)}: ${err.name ?? "error"}: ${String(err.message ?? "")}`, err.name));
      else resolve(res);
    });
  });
}

/** The bus daemon itself (org.freedesktop.DBus), for GetNameOwner and AddMatch. */
export const BUS_DAEMON = { destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus" } as const;

/** Asks the bus daemon to route the signals `rule` matches to this connection (a signal is only sent to subscribers). */
export function addMatch(bus: Bus, rule: string, error: new (message: string, dbusName?: string) => Error): Promise<unknown[]> {
  return callMethod(bus, { ...BUS_DAEMON, member: "AddMatch", signature: "s", body: [rule] }, error);
}
