// The managed /etc/hosts (upstream kubelet_pods_test.go TestManagedHostsFileContent cases) and pod names.
import { describe, expect, test } from "bun:test";
import { kernelHostname, managedHostsFileContent, nodeHostsFileContent, podHostnameAndDomain } from "../../../src/pod/network/index.ts";

const LOCAL = `# Kubernetes-managed hosts file.
127.0.0.1\tlocalhost
::1\tlocalhost ip6-localhost ip6-loopback
fe00::0\tip6-localnet
fe00::0\tip6-mcastprefix
fe00::1\tip6-allnodes
fe00::2\tip6-allrouters
`;

describe("hosts file", () => {
  test.each([
    ["pod IP under the hostname", ["123.45.67.89"], "podFoo", "", undefined, `${LOCAL}123.45.67.89\tpodFoo\n`],
    ["FQDN first with a domain", ["203.0.113.1"], "podFoo", "domainFoo", undefined, `${LOCAL}203.0.113.1\tpodFoo.domainFoo\tpodFoo\n`],
    ["dual stack", ["203.0.113.1", "fd00::6"], "podFoo", "", undefined, `${LOCAL}203.0.113.1\tpodFoo\nfd00::6\tpodFoo\n`],
    [
      "hostAliases appended",
      ["12.34.56.78"],
      "podFoo",
      "domainFoo",
      [
        { ip: "123.45.67.89", hostnames: ["foo", "bar", "baz"] },
        { ip: "456.78.90.123", hostnames: ["park", "doo", "boo"] },
      ],
      `${LOCAL}12.34.56.78\tpodFoo.domainFoo\tpodFoo\n\n# Entries added by HostAliases.\n123.45.67.89\tfoo\tbar\tbaz\n456.78.90.123\tpark\tdoo\tboo\n`,
    ],
  ])("%s", (_n, ips, hostname, domain, aliases, want) => {
    expect(managedHostsFileContent(ips, hostname, domain, aliases)).toBe(want);
  });

  test("hostNetwork: the node's file behind a header, aliases appended", () => {
    expect(nodeHostsFileContent("127.0.0.1\tlocalhost\n", [{ ip: "10.0.0.1", hostnames: ["db"] }])).toBe(
      "# Kubernetes-managed hosts file (host network).\n127.0.0.1\tlocalhost\n\n# Entries added by HostAliases.\n10.0.0.1\tdb\n",
    );
  });
});

describe("pod hostname and domain", () => {
  const pod = (spec: { hostname?: string; subdomain?: string; setHostnameAsFQDN?: boolean; hostnameOverride?: string }, name = "web") => ({
    metadata: { name, namespace: "prod" },
    spec,
  });
  test.each([
    ["pod name", {}, "web", ""],
    ["spec.hostname", { hostname: "h0" }, "h0", ""],
    ["subdomain", { hostname: "h0", subdomain: "sub" }, "h0", "sub.prod.svc.cluster.local"],
    ["hostnameOverride wins, without a domain", { hostname: "h0", subdomain: "sub", hostnameOverride: "db-0.example" }, "db-0.example", ""],
  ])("%s", (_n, spec, hostname, hostDomain) => {
    expect(podHostnameAndDomain(pod(spec), "cluster.local")).toEqual({ hostname, hostDomain });
  });

  test("long names are cut to 63 without a trailing dash or dot", () => {
    expect(podHostnameAndDomain(pod({}, `${"a".repeat(62)}-b`), "").hostname).toBe("a".repeat(62));
  });

  test("setHostnameAsFQDN: the kernel hostname is the FQDN, at most 64 characters", () => {
    expect(kernelHostname(pod({ hostname: "h0", subdomain: "sub", setHostnameAsFQDN: true }), "cluster.local")).toBe("h0.sub.prod.svc.cluster.local");
    expect(kernelHostname(pod({ hostname: "h0", setHostnameAsFQDN: true }), "cluster.local")).toBe("h0");
    expect(() => kernelHostname(pod({ hostname: "h".repeat(40), subdomain: "sub", setHostnameAsFQDN: true }), "cluster.local")).toThrow(
      "is too long (64 characters is the max, 67 characters requested)",
    );
  });
});
