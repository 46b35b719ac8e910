import { expect, test } from "bun:test";
import { nodeAddresses, parseNodeIPs, validateNodeIP, type HostNetwork } from "../../src/node/addresses.ts";

const HOST = ["127.0.0.1", "::1", "192.0.2.2", "2001:db8::2", "fe80::1"];
const host = (detected?: string): HostNetwork => ({ detect: () => detected, interfaceAddresses: () => HOST });

test.each<[string | undefined, string | undefined, string[][]]>([
  [
    undefined,
    "192.0.2.2",
    [
      ["InternalIP", "192.0.2.2"],
      ["Hostname", "h"],
    ],
  ],
  [
    "192.0.2.2",
    "198.51.100.9",
    [
      ["InternalIP", "192.0.2.2"],
      ["Hostname", "h"],
    ],
  ],
  [
    " 192.0.2.2 , 2001:db8::2 ",
    undefined,
    [
      ["InternalIP", "192.0.2.2"],
      ["InternalIP", "2001:db8::2"],
      ["Hostname", "h"],
    ],
  ],
  [
    "::ffff:192.0.2.2",
    undefined,
    [
      ["InternalIP", "::ffff:192.0.2.2"],
      ["Hostname", "h"],
    ],
  ],
  // 0.0.0.0 or :: alone is no --node-ip (upstream's nodeIPSpecified): detected.
  [
    "0.0.0.0",
    "192.0.2.2",
    [
      ["InternalIP", "192.0.2.2"],
      ["Hostname", "h"],
    ],
  ],
  [
    "::",
    "192.0.2.2",
    [
      ["InternalIP", "192.0.2.2"],
      ["Hostname", "h"],
    ],
  ],
  [undefined, undefined, [["Hostname", "h"]]],
])("addresses for --node-ip=%p (detected %p)", (ip, detected, want) => {
  expect(nodeAddresses("h", ip, host(detected)).map((a) => [a.type, a.address])).toEqual(want);
});

// Upstream TestValidateNodeIPParam, with the host's interfaces injected.
test.each<[string, string | undefined]>([
  ["192.0.2.2", undefined],
  ["2001:db8::2", undefined],
  ["2001:0db8:0000::0002", undefined],
  ["::ffff:192.0.2.2", undefined],
  ["bogus", "nodeIP must be a valid IP address"],
  ["127.0.0.1", "nodeIP can't be loopback address"],
  ["127.1.2.3", "nodeIP can't be loopback address"],
  ["::1", "nodeIP can't be loopback address"],
  ["224.0.0.1", "nodeIP can't be a multicast address"],
  ["ff00::1", "nodeIP can't be a multicast address"],
  ["169.254.0.1", "nodeIP can't be a link-local unicast address"],
  ["fe80::0202:b3ff:fe1e:8329", "nodeIP can't be a link-local unicast address"],
  ["fe80::1", "nodeIP can't be a link-local unicast address"],
  ["0.0.0.0", "nodeIP can't be an all zeros address"],
  ["::", "nodeIP can't be an all zeros address"],
  ["1.2.3.4", 'node IP: "1.2.3.4" not found in the host\'s network interfaces'],
  ["10.20.30.40", 'node IP: "10.20.30.40" not found in the host\'s network interfaces'],
  ["2001:db8::3", 'node IP: "2001:db8::3" not found in the host\'s network interfaces'],
])("validateNodeIP(%p) → %p", (ip, want) => {
  expect(validateNodeIP(ip, HOST)).toBe(want);
});

test("a refused --node-ip fails the setter with upstream's wording, the secondary one named as such", () => {
  expect(() => nodeAddresses("h", "127.0.0.1", host("192.0.2.2"))).toThrow("failed to validate nodeIP: nodeIP can't be loopback address");
  expect(() => nodeAddresses("h", "10.20.30.40", host())).toThrow(
    'failed to validate nodeIP: node IP: "10.20.30.40" not found in the host\'s network interfaces',
  );
  expect(() => nodeAddresses("h", "192.0.2.2,fe80::5", host())).toThrow("failed to validate secondaryNodeIP: nodeIP can't be a link-local unicast address");
});

test("a --node-ip that does not parse names the value", () => {
  expect(() => parseNodeIPs("10.0.0.300")).toThrow('failed to parse node IP "10.0.0.300"');
  expect(() => parseNodeIPs("10.0.0.1,10.0.0.2")).toThrow(/dual-stack must be one IPv4 and one IPv6 address/);
  expect(() => parseNodeIPs("0.0.0.0,2001:db8::2")).toThrow("dual-stack node IP cannot include '0.0.0.0' or '::'");
  expect(parseNodeIPs(undefined)).toEqual([]);
});
