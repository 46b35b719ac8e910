import { describe, expect, test } from "bun:test";
import { networkStats, parseNetDevInterfaces } from "../../src/stats/network.ts";

const NET_DEV = `Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo:    1000      10    0    0    0     0          0         0     1000      10    0    0    0     0       0          0
  eth0:   52000     400    3    0    0     0          0         0    31000     300    4    0    0     0       0          0
  ens5: 7 1 0 0 0 0 0 0 9 1 0 0 0 0 0 0
veth12:     500       5    0    0    0     0          0         0      500       5    0    0    0     0       0          0
docker0:     1       1    0    0    0     0          0         0        1       1    0    0    0     0       0          0
 cni0: garbage
`;

describe("network stats from /proc/<pid>/net/dev", () => {
  test("bytes and errors per interface; lo, veth*, docker* and malformed lines dropped", () => {
    expect(parseNetDevInterfaces(NET_DEV)).toEqual([
      { name: "eth0", rxBytes: 52000, rxErrors: 3, txBytes: 31000, txErrors: 4 },
      { name: "ens5", rxBytes: 7, rxErrors: 0, txBytes: 9, txErrors: 0 },
    ]);
  });

  test.each([
    [
      "eth0 present: its figures inline, every interface listed",
      [
        { name: "eth0", rxBytes: 1 },
        { name: "ens5", rxBytes: 2 },
      ],
      {
        time: "T",
        name: "eth0",
        rxBytes: 1,
        interfaces: [
          { name: "eth0", rxBytes: 1 },
          { name: "ens5", rxBytes: 2 },
        ],
      },
    ],
    ["no eth0: the list only", [{ name: "ens5", rxBytes: 2 }], { time: "T", interfaces: [{ name: "ens5", rxBytes: 2 }] }],
    ["no interface", [], { time: "T", interfaces: [] }],
  ])("%s", (_name, ifaces, want) => {
    expect(networkStats(ifaces, "T")).toEqual(want);
  });
});
