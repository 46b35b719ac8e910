// I/O only: sends the transient slices of systemd-slices.ts to systemd over D-Bus, as libcontainer's
// systemd manager does for kubelet's cgroupDriver "systemd" (runc libcontainer/cgroups/systemd
// common.go startUnit/stopUnit through go-systemd): StartTransientUnit(name, "replace", props, []),
// then wait for the job's JobRemoved signal; "UnitExists" is fine (the unit's properties are then set
// with SetUnitProperties); StopUnit(name, "replace") removes it. The bus connection is dbus.ts's.
import { z } from "zod";
import { kv, log } from "../log.ts";
import { addMatch, callMethod, createBusClient, DBusError, SYSTEM_BUS_SOCKET, type Bus, type BusMessage } from "./dbus.ts";
import type { TransientUnit, UnitProperty } from "./systemd-slices.ts";

const SYSTEMD = { destination: "org.freedesktop.systemd1", path: "/org/freedesktop/systemd1" } as const;
const MANAGER = "org.freedesktop.systemd1.Manager";

/** What the pod cgroup manager needs from systemd (a fake in unit tests). */
export interface SystemdUnits {
  /** systemd's major version (Manager.Version), e.g. 252. */
  version(): Promise<number>;
  /** Starts a transient unit (or updates the properties of the one that exists) and waits for its job. */
  startTransientUnit(u: TransientUnit): Promise<void>;
  /**
   * Sets a unit's properties at runtime (SetUnitProperties(name, true, props)), as libcontainer's
   * systemd manager Set does, so systemd itself holds the values and re-applies them on daemon-reload.
   */
  setUnitProperties(name: string, properties: UnitProperty[]): Promise<void>;
  /** Stops a unit and waits for the job; a unit systemd does not know is already stopped. */
  stopUnit(name: string): Promise<void>;
  close(): void;
}

export class SystemdDBusError extends DBusError {
  override name = "SystemdDBusError";
}

/** A D-Bus variant as dbus-native marshals it: [signature, value]; "t" goes as a decimal string (exceeds 2^53). */
function variant(p: UnitProperty): [string, [string, unknown]] {
  return [p.name, [p.signature, p.signature === "t" ? p.value.toString() : p.value]];
}

/** Leading integer of Manager.Version ("252.22-1~deb12u1" → 252). */
export function parseSystemdVersion(v: string): number {
  const m = /^v?(\d+)/.exec(v.trim());
  if (!m) throw new SystemdDBusError(`systemd Manager.Version ${JSON.stringify(v)} does not start with a number`);
  return Number(m[1]);
}

const jobPath = z.string().startsWith("/");
const jobRemoved = z.tuple([z.number(), z.string(), z.string(), z.string()]);
const versionReply = z.tuple([z.tuple([z.array(z.unknown()), z.tuple([z.string()])])]);

/** A connection to systemd over the system bus (lazily opened on first use). */
export function createSystemdDBus(opts: { socket?: string; jobTimeoutMs?: number } = {}): SystemdUnits {
  const socket = opts.socket ?? SYSTEM_BUS_SOCKET;
  const jobTimeoutMs = opts.jobTimeoutMs ?? 30_000;
  let bus: Bus | undefined;
  let ready: Promise<Bus> | undefined;
  /** JobRemoved results by job path: waiters, and results that came before the waiter (a reply can trail the signal). */
  const waiters = new Map<string, (result: string) => void>();
  const finished = new Map<string, string>();
  let cachedVersion: number | undefined;

  const invoke = (b: Bus, msg: Record<string, unknown>) => callMethod(b, msg, SystemdDBusError);

  const connect = () =>
    (ready ??= new Promise<Bus>((resolve, reject) => {
      const fail = (e: Error) => {
        ready = undefined;
        bus = undefined;
        reject(new SystemdDBusError(`cgroupDriver systemd: cannot reach systemd over D-Bus at ${socket}: ${e.message}`));
      };
      createBusClient(socket).then((b) => {
        b.connection.on("error", fail);
        b.connection.on("end", () => {
          if (bus === b) {
            bus = undefined;
            ready = undefined;
          }
        });
        b.connection.on("message", (m: BusMessage) => {
          if (m.type !== 4 || m.interface !== MANAGER || m.member !== "JobRemoved") return;
          const parsed = jobRemoved.safeParse(m.body);
          if (!parsed.success) return;
          const [, job, , result] = parsed.data;
          const w = waiters.get(job);
          if (w) w(result);
          else {
            finished.set(job, result);
            if (finished.size > 256) finished.delete(finished.keys().next().value!);
          }
        });
        b.connection.once("connect", async () => {
          try {
            // Manager signals are only sent to subscribers; the match rule routes them to us.
            await addMatch(b, `type='signal',sender='org.freedesktop.systemd1',interface='${MANAGER}',member='JobRemoved'`, SystemdDBusError);
            await invoke(b, { ...SYSTEMD, interface: MANAGER, member: "Subscribe" }).catch(() => undefined); // AlreadySubscribed is fine
            bus = b;
            resolve(b);
          } catch (e) {
            b.connection.end();
            fail(e as Error);
          }
        });
      }, fail);
    }));

  function waitJob(job: string, what: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const done = (result: string) => {
        clearTimeout(timer);
        waiters.delete(job);
        if (result === "done") resolve();
        else reject(new SystemdDBusError(`systemd job for ${what} finished with result ${JSON.stringify(result)} (expected "done")`));
      };
      const timer = setTimeout(() => {
        waiters.delete(job);
        reject(new SystemdDBusError(`systemd job ${job} for ${what} did not finish within ${jobTimeoutMs} ms`));
      }, jobTimeoutMs);
      const early = finished.get(job);
      if (early !== undefined) {
        finished.delete(job);
        done(early);
      } else waiters.set(job, done);
    });
  }

  const jobOf = (reply: unknown[], member: string) => {
    const p = jobPath.safeParse(reply[0]);
    if (!p.success) throw new SystemdDBusError(`systemd ${member} replied ${JSON.stringify(reply[0])}, not a job object path`);
    return p.data;
  };

  return {
    async version() {
      if (cachedVersion !== undefined) return cachedVersion;
      const b = await connect();
      const reply = await invoke(b, { ...SYSTEMD, interface: "org.freedesktop.DBus.Properties", member: "Get", signature: "ss", body: [MANAGER, "Version"] });
      const p = versionReply.safeParse(reply);
      if (!p.success) throw new SystemdDBusError(`systemd Manager.Version: unexpected reply ${JSON.stringify(reply)}`);
      return (cachedVersion = parseSystemdVersion(p.data[0][1][0]));
    },
    async startTransientUnit(u) {
      const b = await connect();
      const props = u.properties.map(variant);
      try {
        const job = jobOf(
          await invoke(b, { ...SYSTEMD, interface: MANAGER, member: "StartTransientUnit", signature: "ssa(sv)a(sa(sv))", body: [u.name, u.mode, props, []] }),
          "StartTransientUnit",
        );
        await waitJob(job, u.name);
        log.debug(`systemd unit started ${kv({ unit: u.name, parent: u.parent })}`);
      } catch (e) {
        if (!(e instanceof SystemdDBusError) || e.dbusName !== "org.freedesktop.systemd1.UnitExists") throw e;
        // As libcontainer: an existing unit is kept and its resources set (Wants/Description cannot change).
        const settable = props.filter(([name]) => !["Description", "Wants", "DefaultDependencies"].includes(name));
        await invoke(b, { ...SYSTEMD, interface: MANAGER, member: "SetUnitProperties", signature: "sba(sv)", body: [u.name, true, settable] });
      }
    },
    async setUnitProperties(name, properties) {
      if (properties.length === 0) return;
      const b = await connect();
      await invoke(b, { ...SYSTEMD, interface: MANAGER, member: "SetUnitProperties", signature: "sba(sv)", body: [name, true, properties.map(variant)] });
      log.debug(`systemd unit properties set ${kv({ unit: name, properties: properties.map((p) => `${p.name}=${String(p.value)}`).join(",") })}`);
    },
    async stopUnit(name) {
      const b = await connect();
      try {
        const job = jobOf(await invoke(b, { ...SYSTEMD, interface: MANAGER, member: "StopUnit", signature: "ss", body: [name, "replace"] }), "StopUnit");
        await waitJob(job, name);
        log.debug(`systemd unit stopped ${kv({ unit: name })}`);
      } catch (e) {
        if (e instanceof SystemdDBusError && e.dbusName === "org.freedesktop.systemd1.NoSuchUnit") return;
        throw e;
      }
    },
    close() {
      bus?.connection.end();
      bus = undefined;
      ready = undefined;
      for (const w of waiters.values()) w("canceled");
    },
  };
}
