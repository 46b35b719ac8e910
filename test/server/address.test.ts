import { describe, expect, test } from "bun:test";
import { isLinkLocalUnicast, isLoopback, isLoopbackOnly, isMulticast, isUnspecified, parseIP, sameIP } from "../../src/server/address.ts";

describe("listen addresses are parsed, not compared as strings", () => {
  test.each([
    ["", true, false],
    ["0.0.0.0", true, false],
    ["::", true, false],
    ["::0", true, false],
    ["0:0:0:0:0:0:0:0", true, false],
    ["0000:0000::0000", true, false],
    ["::ffff:0.0.0.0", true, false],
    ["[::]", true, false],
    ["127.0.0.1", false, true],
    ["127.1.2.3", false, true],
    ["::1", false, true],
    ["0:0:0:0:0:0:0:1", false, true],
    ["::ffff:127.0.0.1", false, true],
    ["192.0.2.10", false, false],
    ["2001:db8::1", false, false],
    ["::ffff:192.0.2.1", false, false],
    ["not-an-ip", false, false],
  ])("%j: unspecified=%p loopback=%p", (addr, unspecified, loopback) => {
    expect(isUnspecified(addr)).toBe(unspecified);
    expect(isLoopback(addr)).toBe(loopback);
    expect(isLoopbackOnly(addr)).toBe(loopback);
  });

  test("IPv6 with an embedded IPv4 quad parses to 16 bytes", () => {
    expect([...parseIP("::ffff:1.2.3.4")!]).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 255, 255, 1, 2, 3, 4]);
    expect(parseIP("1.2.3")).toBeUndefined();
  });

  test.each([
    ["224.0.0.1", true, false],
    ["239.255.255.250", true, false],
    ["::ffff:224.0.0.1", true, false],
    ["ff02::1", true, false],
    ["169.254.10.1", false, true],
    ["::ffff:169.254.0.1", false, true],
    ["fe80::1", false, true],
    ["febf::1", false, true],
    ["fec0::1", false, false],
    ["192.0.2.10", false, false],
    ["not-an-ip", false, false],
  ])("%j: multicast=%p link-local unicast=%p", (addr, multicast, linkLocal) => {
    expect(isMulticast(addr)).toBe(multicast);
    expect(isLinkLocalUnicast(addr)).toBe(linkLocal);
  });

  test.each([
    ["192.0.2.1", "::ffff:192.0.2.1", true],
    ["2001:db8::1", "2001:0db8:0:0::1", true],
    ["192.0.2.1", "192.0.2.2", false],
    ["::1", "127.0.0.1", false],
    ["x", "x", false],
  ])("sameIP(%j, %j) = %p", (a, b, same) => {
    expect(sameIP(a, b)).toBe(same);
  });
});
