import { describe, expect, test } from "bun:test";
import { dnatRule } from "../../scripts/conformance/service-route.ts";

describe("dnatRule", () => {
  test.each([
    ["-A", "PREROUTING"],
    ["-D", "OUTPUT"],
  ] as const)("%s %s: the Service's ClusterIP:port to the relay, tagged with the run's comment", (op, chain) => {
    expect(dnatRule(op, chain, "10.96.0.1", 443, "10.0.0.5:40123", "bunlet-conformance-7")).toEqual([
      "-t",
      "nat",
      op,
      chain,
      "-d",
      "10.96.0.1/32",
      "-p",
      "tcp",
      "--dport",
      "443",
      "-m",
      "comment",
      "--comment",
      "bunlet-conformance-7",
      "-j",
      "DNAT",
      "--to-destination",
      "10.0.0.5:40123",
    ]);
  });
});
