// The D-Bus transport's pure parts and its error when no bus is there; real systemd is driven in the
// v2 guest (test/integration/v2/systemd-dbus.test.ts).
import { describe, expect, test } from "bun:test";
import { createSystemdDBus, parseSystemdVersion } from "../../src/pod/systemd-dbus.ts";

describe("systemd D-Bus transport", () => {
  test.each([
    ["252.22-1~deb12u1", 252],
    ["255", 255],
    ["v249.11-0ubuntu3", 249],
  ])("Manager.Version %s → %d", (v, n) => {
    expect(parseSystemdVersion(v)).toBe(n);
  });

  test("a version without a number is a clear error", () => {
    expect(() => parseSystemdVersion("unknown")).toThrow(/Manager\.Version "unknown"/);
  });

  test("no bus at the socket: the error names the driver and the socket", async () => {
    const socket = `/tmp/bunlet-no-bus-${process.pid}.sock`;
    const units = createSystemdDBus({ socket });
    await expect(units.stopUnit("x.slice")).rejects.toThrow(`cgroupDriver systemd: cannot reach systemd over D-Bus at ${socket}`);
    units.close();
  });
});
