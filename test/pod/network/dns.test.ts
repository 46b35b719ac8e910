// upstream pkg/kubelet/network/dns behaviour, table-driven: resolv.conf parsing, dnsPolicy, clusterDNS
// fallback with upstream's MissingClusterDNS text, pod dnsConfig merging and resolver limits.
import { describe, expect, test } from "bun:test";
import { type DnsPod, type DnsSettings, parseResolvConf, podDnsConfig } from "../../../src/pod/network/index.ts";

const HOST =
  "# generated\nnameserver 10.255.255.53\nnameserver 10.255.255.54\nsearch corp.example. lab.example .\noptions ndots:2 timeout:1\noptions attempts:3\n";
const cluster: DnsSettings = { clusterDNS: ["10.96.0.10"], clusterDomain: "cluster.local", resolvConf: "/etc/resolv.conf" };
const pod = (spec: DnsPod["spec"] = {}): DnsPod => ({ metadata: { name: "web", namespace: "prod", uid: "u1" }, spec });

test("parseResolvConf: nameservers accumulate, last search wins without dots, options merge", () => {
  expect(parseResolvConf(HOST)).toEqual({
    servers: ["10.255.255.53", "10.255.255.54"],
    searches: ["corp.example", "lab.example"],
    options: ["ndots:2", "timeout:1", "attempts:3"],
    errors: [],
  });
  expect(parseResolvConf("nameserver\n").errors).toEqual(["nameserver list is empty "]);
});

describe("dnsPolicy", () => {
  const hostCfg = { servers: ["10.255.255.53", "10.255.255.54"], searches: ["corp.example", "lab.example"], options: ["ndots:2", "timeout:1", "attempts:3"] };
  const clusterCfg = {
    servers: ["10.96.0.10"],
    searches: ["prod.svc.cluster.local", "svc.cluster.local", "cluster.local", "corp.example", "lab.example"],
    options: ["ndots:5"],
  };
  test.each([
    ["ClusterFirst (default)", {}, cluster, clusterCfg],
    ["ClusterFirst on hostNetwork falls back to Default", { hostNetwork: true }, cluster, hostCfg],
    ["ClusterFirstWithHostNet on hostNetwork", { hostNetwork: true, dnsPolicy: "ClusterFirstWithHostNet" }, cluster, clusterCfg],
    ["Default", { dnsPolicy: "Default" }, cluster, hostCfg],
    [
      "None with dnsConfig",
      { dnsPolicy: "None", dnsConfig: { nameservers: ["1.1.1.1"], searches: ["a.example"], options: [{ name: "ndots", value: "1" }, { name: "rotate" }] } },
      cluster,
      { servers: ["1.1.1.1"], searches: ["a.example"], options: ["ndots:1", "rotate"] },
    ],
    [
      "ClusterFirst without clusterDomain keeps the host search",
      {},
      { ...cluster, clusterDomain: "" },
      { servers: ["10.96.0.10"], searches: ["corp.example", "lab.example"], options: ["ndots:5"] },
    ],
    [
      "Default without resolvConf: localhost",
      { dnsPolicy: "Default" },
      { ...cluster, resolvConf: "" },
      { servers: ["127.0.0.1"], searches: ["."], options: [] },
    ],
    [
      "dnsConfig merges into ClusterFirst, options overriding",
      { dnsConfig: { nameservers: ["10.96.0.10", "9.9.9.9"], searches: ["x.example"], options: [{ name: "ndots", value: "2" }] } },
      cluster,
      { ...clusterCfg, servers: ["10.96.0.10", "9.9.9.9"], searches: [...clusterCfg.searches, "x.example"], options: ["ndots:2"] },
    ],
  ])("%s", (_n, spec, settings, want) => {
    const r = podDnsConfig(pod(spec as DnsPod["spec"]), settings, HOST);
    expect(r.config).toEqual(want);
    expect(r.events).toEqual([]);
  });

  test("ClusterFirst without clusterDNS falls back to Default with upstream's MissingClusterDNS events", () => {
    const r = podDnsConfig(pod(), { ...cluster, clusterDNS: [] }, HOST);
    expect(r.config.servers).toEqual(["10.255.255.53", "10.255.255.54"]);
    const msg = 'kubelet does not have ClusterDNS IP configured and cannot create Pod using "ClusterFirst" policy. Falling back to "Default" policy.';
    expect(r.events).toEqual([
      { object: "node", reason: "MissingClusterDNS", message: msg },
      { object: "pod", reason: "MissingClusterDNS", message: `pod: "web_prod(u1)". ${msg}` },
    ]);
  });
});

describe("resolver limits (DNSConfigForming)", () => {
  test("more than 3 nameservers are cut", () => {
    const r = podDnsConfig(pod({ dnsPolicy: "Default", dnsConfig: { nameservers: ["1.1.1.1", "1.1.1.2"] } }), cluster, HOST);
    expect(r.config.servers).toEqual(["10.255.255.53", "10.255.255.54", "1.1.1.1"]);
    expect(r.events).toEqual([
      {
        object: "pod",
        reason: "DNSConfigForming",
        message: "Nameserver limits were exceeded, some nameservers have been omitted, the applied nameserver line is: 10.255.255.53 10.255.255.54 1.1.1.1",
      },
    ]);
  });

  test("more than 32 search paths are cut", () => {
    const searches = Array.from({ length: 40 }, (_, i) => `s${i}.example`);
    const r = podDnsConfig(pod({ dnsPolicy: "None", dnsConfig: { nameservers: ["1.1.1.1"], searches } }), cluster, HOST);
    expect(r.config.searches).toHaveLength(32);
    expect(r.events[0]!.message).toStartWith(
      "Search Line limits were exceeded, some search paths have been omitted, the applied search line is: s0.example s1.example",
    );
  });
});
