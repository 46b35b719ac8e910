// bunlet's logind client (src/node/shutdown/logind.ts) against the real systemd-logind: the
// InhibitDelayMaxSec drop-in + reload raise InhibitDelayMaxUSec, the "delay" inhibitor taken over
// D-Bus (its fd received through SCM_RIGHTS) is listed by logind as upstream's kubelet one, and
// closing the fd removes it. Runs where PID 1 is systemd with logind (the v2 guest with --systemd,
// via in-guest.test.ts); skips elsewhere. The guest's /etc writes vanish at poweroff.
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { realClock } from "../../../src/clock.ts";
import { pollUntil } from "../../support/binary.ts";
import {
  createLogindDBus,
  createShutdownManager,
  KUBELET_LOGIND_CONF,
  LOGIND_CONFIG_DIRECTORY,
  shutdownGroupsFromConfig,
} from "../../../src/node/shutdown/index.ts";

const pid1 = (() => {
  try {
    return readFileSync("/proc/1/comm", "utf8").trim();
  } catch {
    return "";
  }
})();
const enabled = pid1 === "systemd" && process.getuid?.() === 0 && existsSync("/run/systemd/seats") && !!process.env.BUNLET_IN_V2_GUEST;
if (!enabled)
  console.warn("skipping logind tests: needs systemd + logind as in the v2 guest with --systemd (in-guest.test.ts); they write /etc/systemd/logind.conf.d");

/** logind's inhibitors, as `systemd-inhibit --list` shows them: [what, who, why, mode]. */
function inhibitors(): string[][] {
  const r = Bun.spawnSync(
    ["busctl", "--system", "--json=short", "call", "org.freedesktop.login1", "/org/freedesktop/login1", "org.freedesktop.login1.Manager", "ListInhibitors"],
    { stdout: "pipe", stderr: "pipe" },
  );
  if (r.exitCode !== 0) throw new Error(`busctl ListInhibitors: ${r.stderr.toString()}`);
  const j = JSON.parse(r.stdout.toString()) as { data: [unknown[][]] };
  return j.data[0].map((row) => row.slice(0, 4).map(String));
}
const KUBELET = ["shutdown", "kubelet", "Kubelet needs time to handle node shutdown", "delay"];

describe.skipIf(!enabled)("graceful node shutdown against the real logind", () => {
  const dropIn = join(LOGIND_CONFIG_DIRECTORY, KUBELET_LOGIND_CONF);
  afterAll(() => rmSync(dropIn, { force: true }));

  test("inhibit delay raised through the drop-in; the delay lock is logind's kubelet inhibitor until released", async () => {
    const logind = createLogindDBus();
    const before = await logind.currentInhibitDelayMs();
    expect(before).toBeLessThan(45_000); // logind's default is 5 s
    const m = createShutdownManager({
      groups: shutdownGroupsFromConfig({ shutdownGracePeriod: "45s", shutdownGracePeriodCriticalPods: "15s" }),
      logind: () => createLogindDBus(),
      activePods: () => [],
      killPod: async () => {},
      clock: realClock,
      nodeName: "guest",
      reloadPollMs: 100,
    });
    await m.start();
    expect(readFileSync(dropIn, "utf8")).toBe("# Kubelet logind override\n[Login]\nInhibitDelayMaxSec=45\n");
    expect(await logind.currentInhibitDelayMs()).toBe(45_000);
    expect(inhibitors()).toContainEqual(KUBELET);

    m.stop();
    // Closing the fd is the release: logind drops the inhibitor once it sees the FIFO's writer gone.
    await pollUntil(() => !inhibitors().some((i) => i.join() === KUBELET.join()), "logind dropped the kubelet inhibitor", 10_000, 50);
    logind.close();
  }, 60_000);

  test("an Inhibit call logind refuses names its D-Bus error", async () => {
    const { callReturningFd } = await import("../../../src/node/shutdown/inhibit-fd.ts");
    expect(() =>
      callReturningFd("/run/dbus/system_bus_socket", {
        destination: "org.freedesktop.login1",
        path: "/org/freedesktop/login1",
        interface: "org.freedesktop.login1.Manager",
        member: "Inhibit",
        args: ["nonsense", "kubelet", "x", "delay"],
      }),
    ).toThrow("org.freedesktop.DBus.Error.InvalidArgs");
  });
});
