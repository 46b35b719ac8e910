// The pod schema for the lifecycle/volumes fields (src/pod/types.ts): each is accepted as upstream
// validates it, or refused with the field path and the reason.
import { describe, expect, test } from "bun:test";
import { decodePod } from "../../src/pod/manifest.ts";

const pod = (container: Record<string, unknown>, spec: Record<string, unknown> = {}) => ({
  metadata: { name: "p" },
  spec: { containers: [{ name: "app", image: "busybox", ...container }], ...spec },
});
const claimVolume = (name: string) => ({ name, persistentVolumeClaim: { claimName: name } });
const errors = (obj: unknown) => decodePod(obj, "f.yaml").errors.map((e) => e.message);

describe("lifecycle hooks", () => {
  test.each([
    ["exec postStart", { postStart: { exec: { command: ["true"] } } }],
    ["httpGet preStop", { preStop: { httpGet: { path: "/q", port: 8080 } } }],
    ["sleep preStop", { preStop: { sleep: { seconds: 5 } } }],
    ["sleep 0 preStop", { preStop: { sleep: { seconds: 0 } } }],
  ])("accepts %s", (_n, lifecycle) => {
    expect(errors(pod({ lifecycle }))).toEqual([]);
  });

  test.each([
    [
      "tcpSocket",
      { preStop: { tcpSocket: { port: 80 } } },
      "spec.containers[0].lifecycle.preStop.tcpSocket: tcpSocket is not supported as a lifecycle handler",
    ],
    ["two handlers", { postStart: { exec: { command: ["a"] }, sleep: { seconds: 1 } } }, "must specify exactly one of exec, httpGet, sleep"],
    [
      "sleep below 0",
      { preStop: { sleep: { seconds: -1 } } },
      "lifecycle.preStop.sleep.seconds: must be non-negative and less than terminationGracePeriodSeconds (30)",
    ],
    ["sleep beyond grace", { preStop: { sleep: { seconds: 31 } } }, "must be non-negative and less than terminationGracePeriodSeconds (30)"],
    [
      "stopSignal (not acted on)",
      { stopSignal: "SIGUSR1" },
      'lifecycle.stopSignal: "SIGUSR1" is not supported by bunlet: a container stop signal (ContainerStopSignals) is not implemented',
    ],
  ])("refuses %s", (_n, lifecycle, want) => {
    expect(errors(pod({ lifecycle })).join("\n")).toContain(want);
  });
});

describe("sidecar containers (initContainers[].restartPolicy)", () => {
  const withInit = (init: Record<string, unknown>, c: Record<string, unknown> = {}) => pod(c, { initContainers: [{ name: "i", image: "busybox", ...init }] });
  test("accepted: Always with probes and hooks", () => {
    expect(
      errors(withInit({ restartPolicy: "Always", startupProbe: { exec: { command: ["true"] } }, lifecycle: { preStop: { sleep: { seconds: 1 } } } })),
    ).toEqual([]);
  });
  test.each([
    ["another value", withInit({ restartPolicy: "OnFailure" }), "spec.initContainers[0].restartPolicy"],
    [
      "on a regular container",
      withInit({}, { restartPolicy: "Always" }),
      'spec.containers[0].restartPolicy: "Always" is not supported by bunlet: per-container restart policies (ContainerRestartRules) are not implemented',
    ],
    [
      "probes on a regular init container",
      withInit({ readinessProbe: { exec: { command: ["true"] } } }),
      "spec.initContainers[0].readinessProbe: may not be set for init containers without restartPolicy=Always",
    ],
    [
      "hooks on a regular init container",
      withInit({ lifecycle: { postStart: { exec: { command: ["true"] } } } }),
      "spec.initContainers[0].lifecycle: may not be set for init containers without restartPolicy=Always",
    ],
  ])("refused: %s", (_n, obj, want) => {
    expect(errors(obj).join("\n")).toContain(want);
  });
});

describe("volumes, env valueFrom, sub paths, propagation", () => {
  const dapi = (items: unknown[]) => pod({}, { volumes: [{ name: "v", downwardAPI: { items } }] });
  test.each([
    [
      "downwardAPI labels + resource",
      dapi([
        { path: "l", fieldRef: { fieldPath: "metadata.labels" } },
        { path: "c", resourceFieldRef: { containerName: "app", resource: "limits.cpu", divisor: "1m" } },
      ]),
    ],
    [
      "projected downwardAPI",
      pod({}, { volumes: [{ name: "v", projected: { sources: [{ downwardAPI: { items: [{ path: "n", fieldRef: { fieldPath: "metadata.name" } }] } }] } }] }),
    ],
    [
      "env fieldRef + resourceFieldRef",
      pod({
        env: [
          { name: "IP", valueFrom: { fieldRef: { fieldPath: "status.podIP" } } },
          { name: "MEM", valueFrom: { resourceFieldRef: { resource: "limits.memory", divisor: "1Mi" } } },
        ],
      }),
    ],
    [
      "subPathExpr + HostToContainer",
      pod(
        { volumeMounts: [{ name: "v", mountPath: "/m", subPathExpr: "$(POD)", mountPropagation: "HostToContainer" }] },
        { volumes: [{ name: "v", emptyDir: {} }] },
      ),
    ],
    ["hostPath type Socket", pod({}, { volumes: [{ name: "v", hostPath: { path: "/run/x.sock", type: "Socket" } }] })],
  ])("accepts %s", (_n, obj) => expect(errors(obj)).toEqual([]));

  test.each([
    ["a secret volume", pod({}, { volumes: [{ name: "v", secret: { secretName: "s" } }] }), "static pods may not reference secrets"],
    ["a configMap volume", pod({}, { volumes: [{ name: "v", configMap: { name: "c" } }] }), "static pods may not reference configmaps"],
    [
      "a projected token",
      pod({}, { volumes: [{ name: "v", projected: { sources: [{ serviceAccountToken: { path: "t" } }] } }] }),
      "static pods may not reference serviceaccounts (via projected volumes)",
    ],
    ["env secretKeyRef", pod({ env: [{ name: "X", valueFrom: { secretKeyRef: { name: "s", key: "k" } } }] }), "static pods may not reference secrets"],
    ["a service account", pod({}, { serviceAccountName: "default" }), "static pods may not reference serviceaccounts"],
    ["imagePullSecrets", pod({}, { imagePullSecrets: [{ name: "reg" }] }), "static pods may not reference secrets"],
    [
      "a generic ephemeral volume",
      pod({}, { volumes: [{ name: "v", ephemeral: { volumeClaimTemplate: { spec: {} } } }] }),
      "static pods may not reference persistentvolumeclaims (via ephemeral volumes)",
    ],
    [
      "a projected clusterTrustBundle",
      pod({}, { volumes: [{ name: "v", projected: { sources: [{ clusterTrustBundle: { name: "b", path: "p" } }] } }] }),
      "static pods may not reference clustertrustbundles",
    ],
    [
      "env labels (whole map)",
      pod({ env: [{ name: "X", valueFrom: { fieldRef: { fieldPath: "metadata.labels" } } }] }),
      'Unsupported value: "metadata.labels"',
    ],
    ["volume nodeName", dapi([{ path: "n", fieldRef: { fieldPath: "spec.nodeName" } }]), 'Unsupported value: "spec.nodeName"'],
    ["item path with ..", dapi([{ path: "../x", fieldRef: { fieldPath: "metadata.name" } }]), "items[0].path: must not contain '..'"],
    [
      "subPath with ..",
      pod({ volumeMounts: [{ name: "v", mountPath: "/m", subPath: "../../etc" }] }, { volumes: [{ name: "v", emptyDir: {} }] }),
      "subPath: must not contain '..'",
    ],
    [
      "absolute subPath",
      pod({ volumeMounts: [{ name: "v", mountPath: "/m", subPath: "/etc" }] }, { volumes: [{ name: "v", emptyDir: {} }] }),
      "subPath: must be a relative path",
    ],
    [
      "subPath and subPathExpr",
      pod({ volumeMounts: [{ name: "v", mountPath: "/m", subPath: "a", subPathExpr: "b" }] }, { volumes: [{ name: "v", emptyDir: {} }] }),
      "subPathExpr and subPath are mutually exclusive",
    ],
    [
      "Bidirectional unprivileged",
      pod({ volumeMounts: [{ name: "v", mountPath: "/m", mountPropagation: "Bidirectional" }] }, { volumes: [{ name: "v", emptyDir: {} }] }),
      "Bidirectional mount propagation is available only to privileged containers",
    ],
    ["hostPath with ..", pod({}, { volumes: [{ name: "v", hostPath: { path: "/srv/../etc" } }] }), "spec.volumes[0].hostPath.path: must not contain '..'"],
    ["item path ..data", dapi([{ path: "..data", fieldRef: { fieldPath: "metadata.name" } }]), "items[0].path: must not start with '..'"],
    ["hostPath bad type", pod({}, { volumes: [{ name: "v", hostPath: { path: "/x", type: "Fifo" } }] }), "spec.volumes[0].hostPath.type"],
    [
      "a device of an emptyDir",
      pod({ volumeDevices: [{ name: "v", devicePath: "/dev/xvda" }] }, { volumes: [{ name: "v", emptyDir: {} }] }),
      "volumeDevices[0].name: can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode",
    ],
    [
      "a device path twice",
      pod(
        {
          volumeDevices: [
            { name: "a", devicePath: "/dev/x" },
            { name: "b", devicePath: "/dev/x" },
          ],
        },
        { volumes: [claimVolume("a"), claimVolume("b")] },
      ),
      "volumeDevices[1].devicePath: must be unique",
    ],
    [
      "a device also mounted",
      pod({ volumeDevices: [{ name: "a", devicePath: "/dev/x" }], volumeMounts: [{ name: "a", mountPath: "/m" }] }, { volumes: [claimVolume("a")] }),
      "volumeDevices[0].name: must not already exist in volumeMounts",
    ],
    [
      "a device path with ..",
      pod({ volumeDevices: [{ name: "a", devicePath: "/dev/../x" }] }, { volumes: [claimVolume("a")] }),
      "volumeDevices[0].devicePath: can not contain backsteps ('..')",
    ],
  ])("refuses %s", (_n, obj, want) => expect(errors(obj).join("\n")).toContain(want));
  test("a claim's volume as a device is accepted (an API pod's: a static pod may not name a claim)", () => {
    const obj = pod({ volumeDevices: [{ name: "a", devicePath: "/dev/xvda" }] }, { volumes: [claimVolume("a")] });
    expect(decodePod(obj, "f.yaml", "", "api").errors).toEqual([]);
  });
});

describe("probes", () => {
  test("grpc probe with probe-level terminationGracePeriodSeconds is accepted", () => {
    expect(errors(pod({ livenessProbe: { grpc: { port: 9000, service: "x" }, terminationGracePeriodSeconds: 5 } }))).toEqual([]);
  });
  test.each([
    ["liveness successThreshold 2", { livenessProbe: { exec: { command: ["true"] }, successThreshold: 2 } }, "livenessProbe.successThreshold: must be 1"],
    [
      "readiness terminationGracePeriodSeconds",
      { readinessProbe: { exec: { command: ["true"] }, terminationGracePeriodSeconds: 3 } },
      "must not be set for readinessProbes",
    ],
  ])("refused: %s", (_n, c, want) => expect(errors(pod(c)).join("\n")).toContain(want));
  test("grpc and exec together are refused", () => {
    expect(errors(pod({ livenessProbe: { grpc: { port: 9000 }, exec: { command: ["true"] } } })).join("\n")).toContain(
      "must specify exactly one of exec, httpGet, tcpSocket, grpc",
    );
  });
});

test("envFrom in a static pod is refused with upstream's reason; an API pod may use it", () => {
  const p = pod({ envFrom: [{ configMapRef: { name: "c" } }] });
  expect(errors(p).join("\n")).toContain("static pods may not reference configmaps");
  expect(decodePod(p, "api", "", "api").errors).toEqual([]);
});

describe("clusterTrustBundle projections (API pods)", () => {
  const ctb = (p: object) => pod({}, { volumes: [{ name: "v", projected: { sources: [{ clusterTrustBundle: { path: "ca.pem", ...p } }] } }] });
  test.each([
    ["by name", ctb({ name: "example.com:ca:1", optional: true })],
    ["by signerName, no selector", ctb({ signerName: "example.com/ca" })],
    [
      "by signerName and labelSelector",
      ctb({ signerName: "example.com/ca", labelSelector: { matchLabels: { a: "b" }, matchExpressions: [{ key: "c", operator: "Exists" }] } }),
    ],
  ])("accepts %s", (_n, obj) => expect(decodePod(obj, "api", "", "api").errors).toEqual([]));
  test.each([
    ["name and signerName", ctb({ name: "x", signerName: "example.com/ca" }), "only one of name and signerName may be used"],
    ["neither", ctb({}), "either name or signerName must be specified"],
    ["labelSelector with name", ctb({ name: "x", labelSelector: {} }), "labelSelector must be unset if name is specified"],
    ["no path", pod({}, { volumes: [{ name: "v", projected: { sources: [{ clusterTrustBundle: { name: "x" } }] } }] }), "clusterTrustBundle.path"],
    ["path ..data", ctb({ name: "x", path: "..data" }), "must not start with '..'"],
    ["a bad operator", ctb({ signerName: "example.com/ca", labelSelector: { matchExpressions: [{ key: "c", operator: "Gt" }] } }), "operator"],
    [
      "with a secret in the same source",
      pod({}, { volumes: [{ name: "v", projected: { sources: [{ clusterTrustBundle: { name: "x", path: "p" }, secret: { name: "s" } }] } }] }),
      "may not specify more than 1 volume type per source",
    ],
  ])("refuses %s", (_n, obj, want) => expect(decodePod(obj, "api", "", "api").errors.map(String).join("\n")).toContain(want));
});
