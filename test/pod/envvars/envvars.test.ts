// The service environment variables (upstream pkg/kubelet/envvars envvars_test.go and
// kubelet_pods_test.go TestMakeEnvironmentVariables' service cases).
import { describe, expect, test } from "bun:test";
import { fromServices, makeEnvVariableName, serviceEnvVarMap, type ServiceLike } from "../../../src/pod/envvars/index.ts";

const svc = (namespace: string, name: string, clusterIP: string, ports: NonNullable<ServiceLike["spec"]>["ports"]): ServiceLike => ({
  metadata: { name, namespace },
  spec: { clusterIP, ports },
});

describe("fromServices", () => {
  test("host, first port, named ports and Docker's link variables, as upstream's table", () => {
    const env = fromServices([
      svc("default", "foo-bar", "1.2.3.4", [{ port: 8083, protocol: "TCP" }]),
      svc("default", "abc-123", "5.6.7.8", [
        { name: "u-d-p", port: 8081, protocol: "UDP" },
        { name: "t-c-p", port: 8081, protocol: "TCP" },
      ]),
      svc("default", "q-u-u-x", "9.8.7.6", [
        { port: 8082, protocol: "TCP" },
        { name: "8083", port: 8083, protocol: "TCP" },
      ]),
      svc("default", "svrc-clusterip-none", "None", [{ port: 8082, protocol: "TCP" }]),
      svc("default", "svrc-clusterip-empty", "", [{ port: 8082, protocol: "TCP" }]),
      svc("default", "super-ipv6", "2001:DB8::", [{ name: "u-d-p", port: 8084, protocol: "UDP" }]),
    ]);
    expect(env.map((e) => `${e.name}=${e.value}`)).toEqual([
      "FOO_BAR_SERVICE_HOST=1.2.3.4",
      "FOO_BAR_SERVICE_PORT=8083",
      "FOO_BAR_PORT=tcp://1.2.3.4:8083",
      "FOO_BAR_PORT_8083_TCP=tcp://1.2.3.4:8083",
      "FOO_BAR_PORT_8083_TCP_PROTO=tcp",
      "FOO_BAR_PORT_8083_TCP_PORT=8083",
      "FOO_BAR_PORT_8083_TCP_ADDR=1.2.3.4",
      "ABC_123_SERVICE_HOST=5.6.7.8",
      "ABC_123_SERVICE_PORT=8081",
      "ABC_123_SERVICE_PORT_U_D_P=8081",
      "ABC_123_SERVICE_PORT_T_C_P=8081",
      "ABC_123_PORT=udp://5.6.7.8:8081",
      "ABC_123_PORT_8081_UDP=udp://5.6.7.8:8081",
      "ABC_123_PORT_8081_UDP_PROTO=udp",
      "ABC_123_PORT_8081_UDP_PORT=8081",
      "ABC_123_PORT_8081_UDP_ADDR=5.6.7.8",
      "ABC_123_PORT_8081_TCP=tcp://5.6.7.8:8081",
      "ABC_123_PORT_8081_TCP_PROTO=tcp",
      "ABC_123_PORT_8081_TCP_PORT=8081",
      "ABC_123_PORT_8081_TCP_ADDR=5.6.7.8",
      "Q_U_U_X_SERVICE_HOST=9.8.7.6",
      "Q_U_U_X_SERVICE_PORT=8082",
      "Q_U_U_X_SERVICE_PORT_8083=8083",
      "Q_U_U_X_PORT=tcp://9.8.7.6:8082",
      "Q_U_U_X_PORT_8082_TCP=tcp://9.8.7.6:8082",
      "Q_U_U_X_PORT_8082_TCP_PROTO=tcp",
      "Q_U_U_X_PORT_8082_TCP_PORT=8082",
      "Q_U_U_X_PORT_8082_TCP_ADDR=9.8.7.6",
      "Q_U_U_X_PORT_8083_TCP=tcp://9.8.7.6:8083",
      "Q_U_U_X_PORT_8083_TCP_PROTO=tcp",
      "Q_U_U_X_PORT_8083_TCP_PORT=8083",
      "Q_U_U_X_PORT_8083_TCP_ADDR=9.8.7.6",
      "SUPER_IPV6_SERVICE_HOST=2001:DB8::",
      "SUPER_IPV6_SERVICE_PORT=8084",
      "SUPER_IPV6_SERVICE_PORT_U_D_P=8084",
      "SUPER_IPV6_PORT=udp://[2001:DB8::]:8084",
      "SUPER_IPV6_PORT_8084_UDP=udp://[2001:DB8::]:8084",
      "SUPER_IPV6_PORT_8084_UDP_PROTO=udp",
      "SUPER_IPV6_PORT_8084_UDP_PORT=8084",
      "SUPER_IPV6_PORT_8084_UDP_ADDR=2001:DB8::",
    ]);
  });

  test("a protocol left out is TCP", () => {
    expect(fromServices([svc("ns", "s", "10.0.0.1", [{ port: 80 }])]).find((e) => e.name === "S_PORT")?.value).toBe("tcp://10.0.0.1:80");
  });

  test.each([
    ["foo-bar", "FOO_BAR"],
    ["kubernetes", "KUBERNETES"],
    ["a-b-c", "A_B_C"],
  ])("makeEnvVariableName(%s) = %s", (input, want) => expect(makeEnvVariableName(input)).toBe(want));
});

describe("serviceEnvVarMap", () => {
  const services = [
    svc("default", "kubernetes", "10.96.0.1", [{ name: "https", port: 443, protocol: "TCP" }]),
    svc("default", "other", "10.96.0.2", [{ port: 80 }]),
    svc("ns", "fooservice", "10.96.0.3", [{ port: 8765 }]),
    svc("ns", "headless", "None", [{ port: 80 }]),
    svc("elsewhere", "far", "10.96.0.4", [{ port: 80 }]),
  ];
  const names = (m: Map<string, string>) => [...new Set([...m.keys()].map((k) => k.split("_")[0]))].sort();

  test.each([
    ["the namespace's services and the master service, with service links", "ns", true, ["FOOSERVICE", "KUBERNETES"]],
    ["only the master service without them", "ns", false, ["KUBERNETES"]],
    ["default's services in default", "default", true, ["KUBERNETES", "OTHER"]],
    ["the master service alone in default without links", "default", false, ["KUBERNETES"]],
  ])("%s", (_n, ns, links, want) => expect(names(serviceEnvVarMap(services, ns, links))).toEqual(want));

  test("a service named kubernetes in the pod's namespace wins over the master one", () => {
    const m = serviceEnvVarMap([...services, svc("ns", "kubernetes", "10.1.1.1", [{ port: 8443 }])], "ns", true);
    expect(m.get("KUBERNETES_SERVICE_HOST")).toBe("10.1.1.1");
    expect(m.get("KUBERNETES_SERVICE_PORT")).toBe("8443");
  });

  test("the master service's variables, as a pod in a kubeadm cluster sees them", () => {
    expect(Object.fromEntries(serviceEnvVarMap(services, "x", false))).toEqual({
      KUBERNETES_SERVICE_HOST: "10.96.0.1",
      KUBERNETES_SERVICE_PORT: "443",
      KUBERNETES_SERVICE_PORT_HTTPS: "443",
      KUBERNETES_PORT: "tcp://10.96.0.1:443",
      KUBERNETES_PORT_443_TCP: "tcp://10.96.0.1:443",
      KUBERNETES_PORT_443_TCP_PROTO: "tcp",
      KUBERNETES_PORT_443_TCP_PORT: "443",
      KUBERNETES_PORT_443_TCP_ADDR: "10.96.0.1",
    });
  });
});
