// I/O only: systemd-logind over the system bus for the shutdown manager (upstream
// pkg/kubelet/nodeshutdown/systemd/inhibit_linux.go): read InhibitDelayMaxUSec, reload logind's
// configuration (SIGHUP to systemd-logind.service through systemd's KillUnit), take a "delay"
// inhibitor (inhibit-fd.ts: the reply carries an fd), and watch PrepareForShutdown. Properties,
// KillUnit and the signal go over the bus connection of src/pod/dbus.ts, as systemd's do.
import { z } from "zod";
import { close } from "../../../ffi/libc.ts";
import { kv, log } from "../../log.ts";
import { BUS_DAEMON, addMatch, callMethod, createBusClient, SYSTEM_BUS_SOCKET, type Bus, type BusMessage } from "../../pod/dbus.ts";
import { callReturningFd, DBusCallError } from "./inhibit-fd.ts";
import { writeLogindOverride } from "./logind-conf.ts";
import type { InhibitLock, Logind } from "./manager.ts";

const LOGIND = { destination: "org.freedesktop.login1", path: "/org/freedesktop/login1" } as const;
const LOGIND_MANAGER = "org.freedesktop.login1.Manager";
const SIGHUP = 1;

/** What upstream asks logind for, and what `systemd-inhibit --list` shows for the kubelet. */
export const INHIBIT = { what: "shutdown", who: "kubelet", why: "Kubelet needs time to handle node shutdown", mode: "delay" } as const;

const delayReply = z.tuple([z.tuple([z.array(z.unknown()), z.tuple([z.number()])])]);
const prepareForShutdown = z.tuple([z.boolean()]);

export interface LogindOpts {
  socket?: string;
  /** Where the InhibitDelayMaxSec drop-in goes (upstream /etc/systemd/logind.conf.d/). */
  confDir?: string;
}

/** One system-bus connection to logind (opened lazily; `monitorShutdown`'s onEnd reports its loss). */
export function createLogindDBus(opts: LogindOpts = {}): Logind {
  const socket = opts.socket ?? SYSTEM_BUS_SOCKET;
  let ready: Promise<Bus> | undefined;
  let bus: Bus | undefined;
  let closed = false;
  const onEnd: ((e: Error) => void)[] = [];
  const onShutdown: ((s: boolean) => void)[] = [];

  const invoke = (b: Bus, msg: Record<string, unknown>) => callMethod(b, msg, DBusCallError);

  /** logind's PrepareForShutdown, handed on only when logind itself sent it. */
  function onMessage(b: Bus, m: BusMessage) {
    if (m.type !== 4 || m.interface !== LOGIND_MANAGER || m.member !== "PrepareForShutdown" || m.path !== LOGIND.path) return;
    const p = prepareForShutdown.safeParse(m.body);
    if (!p.success)
      return void log.error(`Failed obtaining shutdown event, PrepareForShutdown event was not bool type as expected ${kv({ body: JSON.stringify(m.body) })}`);
    // The system bus lets any client send a signal with logind's path and interface (and one can be
    // addressed to us directly, past the match rule): only logind's own would kill the pods.
    // Replies come in order, so two signals are still delivered in the order they came.
    void invoke(b, { ...BUS_DAEMON, member: "GetNameOwner", signature: "s", body: [LOGIND.destination] }).then(
      ([owner]) => {
        if (m.sender !== owner)
          return void log.warn(`ignoring a PrepareForShutdown signal that logind did not send ${kv({ sender: m.sender, logind: String(owner) })}`);
        for (const f of onShutdown) f(p.data[0]);
      },
      (e: Error) => log.error(`cannot check the sender of a PrepareForShutdown signal; ignoring it ${kv({ sender: m.sender, error: e.message })}`),
    );
  }

  const connect = () =>
    (ready ??= new Promise<Bus>((resolve, reject) => {
      let up = false;
      const lost = (e: Error) => {
        if (!up) return reject(new DBusCallError(`cannot reach systemd-logind over D-Bus at ${socket}: ${e.message}`));
        if (closed) return;
        closed = true;
        for (const f of onEnd) f(e);
      };
      createBusClient(socket).then((b) => {
        b.connection.on("error", lost);
        b.connection.on("end", () => lost(new Error("the system bus closed the connection")));
        b.connection.on("message", (m: BusMessage) => onMessage(b, m));
        b.connection.once("connect", () => {
          up = true;
          bus = b;
          resolve(b);
        });
      }, lost);
    }));

  return {
    async currentInhibitDelayMs() {
      const reply = await invoke(await connect(), {
        ...LOGIND,
        interface: "org.freedesktop.DBus.Properties",
        member: "Get",
        signature: "ss",
        body: [LOGIND_MANAGER, "InhibitDelayMaxUSec"],
      });
      const p = delayReply.safeParse(reply);
      if (!p.success) throw new DBusCallError(`InhibitDelayMaxUSec from logind is not a uint64 as expected: ${JSON.stringify(reply)}`);
      return p.data[0][1][0] / 1000;
    },
    async overrideInhibitDelay(ms) {
      const path = writeLogindOverride(ms, opts.confDir);
      log.info(`logind drop-in written ${kv({ path, InhibitDelayMaxSec: Math.round(ms / 1000) })}`);
    },
    async reloadLogindConf() {
      await invoke(await connect(), {
        destination: "org.freedesktop.systemd1",
        path: "/org/freedesktop/systemd1",
        interface: "org.freedesktop.systemd1.Manager",
        member: "KillUnit",
        signature: "ssi",
        body: ["systemd-logind.service", "all", SIGHUP],
      });
    },
    async inhibitShutdown(): Promise<InhibitLock> {
      let fd: number;
      try {
        fd = callReturningFd(socket, { ...LOGIND, interface: LOGIND_MANAGER, member: "Inhibit", args: [INHIBIT.what, INHIBIT.who, INHIBIT.why, INHIBIT.mode] });
      } catch (e) {
        throw new DBusCallError(`failed creating systemd inhibitor: ${(e as Error).message}`, (e as DBusCallError).dbusName);
      }
      log.info(`Shutdown inhibitor lock taken ${kv({ ...INHIBIT, fd })}`);
      let released = false;
      return {
        release() {
          if (released) return;
          released = true;
          try {
            close(fd);
          } catch (e) {
            log.error(`unable to close systemd inhibitor lock ${kv({ fd, error: (e as Error).message })}`);
          }
        },
      };
    },
    async monitorShutdown(onEvent, end) {
      const b = await connect();
      onShutdown.push(onEvent);
      onEnd.push(end);
      await addMatch(
        b,
        `type='signal',sender='${LOGIND.destination}',interface='${LOGIND_MANAGER}',member='PrepareForShutdown',path='${LOGIND.path}'`,
        DBusCallError,
      );
    },
    close() {
      closed = true;
      bus?.connection.end();
      bus = undefined;
      ready = undefined;
    },
  };
}
