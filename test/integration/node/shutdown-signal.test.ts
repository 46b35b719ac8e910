// Only logind's own PrepareForShutdown reaches the shutdown manager: on a private dbus-daemon, a fake
// logind owns org.freedesktop.login1 while another client sends the same signal — broadcast (the
// match rule's sender keeps it away) and addressed to bunlet's connection directly (past any match
// rule; the sender check against GetNameOwner drops it). Light: one dbus-daemon, no runtime.
import { afterAll, beforeAll, expect, test } from "bun:test";
import dbusNative from "@homebridge/dbus-native";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLogindDBus } from "../../../src/node/shutdown/logind.ts";
import { until } from "../../support/wait.ts";

interface Bus {
  invoke(msg: Record<string, unknown>, cb: (err: unknown, ...res: unknown[]) => void): void;
  requestName(name: string, flags: number, cb: (err: unknown, r: number) => void): void;
  listNames(cb: (err: unknown, names: string[]) => void): void;
  sendSignal(path: string, iface: string, name: string, signature: string, args: unknown[]): void;
  serial: number;
  name?: string;
  connection: { message(m: Record<string, unknown>): void; end(): void; once(ev: string, f: () => void): void };
}
const dbus = dbusNative as unknown as { createClient(o: { socket: string; authMethods: string[] }): Bus };

const available = Bun.which("dbus-daemon") !== null && process.platform === "linux";
const dir = mkdtempSync(join(tmpdir(), "bunlet-dbus-"));
const socket = join(dir, "bus");
let daemon: { kill(): void } | undefined;
const clients: Bus[] = [];

async function client(): Promise<Bus> {
  const b = dbus.createClient({ socket, authMethods: ["EXTERNAL"] });
  clients.push(b);
  await new Promise<void>((r) => b.connection.once("connect", r));
  // dbus-native says Hello on connect; a round trip makes sure it is done.
  await new Promise((r, j) => b.listNames((e) => (e ? j(e) : r(undefined))));
  return b;
}
const ping = (b: Bus) =>
  new Promise((r) =>
    b.invoke({ destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus.Peer", member: "Ping" }, () =>
      r(undefined),
    ),
  );

beforeAll(async () => {
  if (!available) return;
  const d = Bun.spawn(["dbus-daemon", "--session", "--nofork", `--address=unix:path=${socket}`, "--print-address=1"], { stdout: "pipe", stderr: "inherit" });
  daemon = d;
  const reader = d.stdout.getReader();
  await reader.read(); // the address line: the socket is listening
  reader.releaseLock();
});
afterAll(() => {
  for (const c of clients) c.connection.end();
  daemon?.kill();
  rmSync(dir, { recursive: true, force: true });
});

test.skipIf(!available)("a PrepareForShutdown from anyone but logind is ignored; logind's own is delivered", async () => {
  const logind = await client();
  await new Promise((r, j) => logind.requestName("org.freedesktop.login1", 4, (e) => (e ? j(e) : r(undefined))));

  const events: boolean[] = [];
  const bunlet = createLogindDBus({ socket });
  await bunlet.monitorShutdown(
    (s) => void events.push(s),
    () => {},
  );

  // The spoofer: a broadcast, then one signal to every other connection (bunlet's among them).
  const spoofer = await client();
  spoofer.sendSignal("/org/freedesktop/login1", "org.freedesktop.login1.Manager", "PrepareForShutdown", "b", [true]);
  const names = await new Promise<string[]>((r, j) => spoofer.listNames((e, n) => (e ? j(e) : r(n))));
  for (const n of names.filter((x) => x.startsWith(":")))
    spoofer.connection.message({
      type: 4,
      serial: spoofer.serial++,
      destination: n,
      path: "/org/freedesktop/login1",
      interface: "org.freedesktop.login1.Manager",
      member: "PrepareForShutdown",
      signature: "b",
      body: [true],
    });
  await ping(spoofer); // the daemon has routed the spoofs before it answers

  logind.sendSignal("/org/freedesktop/login1", "org.freedesktop.login1.Manager", "PrepareForShutdown", "b", [false]);
  await until("logind's signal delivered", () => events.length > 0 || undefined, 10_000);
  // Each signal's sender check is one GetNameOwner round trip, answered in order: the spoofs came first.
  expect(events).toEqual([false]);
  bunlet.close();
});
