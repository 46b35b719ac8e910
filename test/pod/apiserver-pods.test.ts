// Pods exactly as a real v1.37 API server returns them — every field defaulted and stamped
// (preemptionPolicy, enableServiceLinks, tolerations, terminationMessagePolicy, managedFields, status…)
// — decode through the API source and are admitted; a value bunlet cannot honour is refused at
// admission naming the field and value (PodFeatureUnsupported). The fixtures: a handwritten
// `kubectl run -it` pod (test/fixtures/apiserver/handwritten-pod.json, from upstream's defaults and
// admission plugins) and whatever a real server's objects were saved under test/fixtures/apiserver/v1.37.2/.
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import { POD_FEATURE_UNSUPPORTED, unsupportedSpecAdmitHandler, unsupportedStandIn } from "../../src/pod/admit-unsupported.ts";
import { decodeManifests, decodePod } from "../../src/pod/manifest.ts";
import { decodeApiPod } from "../../src/pod/sources/api.ts";
import { prepareCreate } from "../support/apiserver/defaults.ts";
import { RESOURCES } from "../support/apiserver/resources.ts";

const FIXTURES = new URL("../fixtures/apiserver/", import.meta.url).pathname;
type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Each Pod of a fixture file (a Pod, a PodList or a List; JSON or YAML). */
function podsOf(file: string): [string, Obj][] {
  const docs = parseAllDocuments(readFileSync(file, "utf8"))
    .map((d) => d.toJS() as Obj)
    .filter(Boolean);
  return docs.flatMap((o) =>
    (Array.isArray(o.items) ? o.items : [o])
      .filter((p: Obj) => p.kind === undefined || p.kind === "Pod")
      .map((p: Obj): [string, Obj] => [`${file.slice(FIXTURES.length)} ${p.metadata?.namespace}/${p.metadata?.name}`, p]),
  );
}

function fixturePods(): [string, Obj][] {
  const real = join(FIXTURES, "v1.37.2");
  const files = existsSync(real)
    ? readdirSync(real)
        .filter((f) => /\.(json|ya?ml)$/.test(f))
        .map((f) => join(real, f))
    : [];
  return [join(FIXTURES, "handwritten-pod.json"), ...files].flatMap(podsOf);
}

const handwritten = (): Obj => JSON.parse(readFileSync(join(FIXTURES, "handwritten-pod.json"), "utf8"));

describe("pods as a v1.37 API server returns them", () => {
  test.each(fixturePods())("%s: decoded by the API source, admitted", (_name, obj) => {
    const { pod, errors } = decodeApiPod(obj);
    expect(errors.map((e) => e.message)).toEqual([]);
    expect(pod!.metadata).toMatchObject({ name: obj.metadata.name, namespace: obj.metadata.namespace, uid: obj.metadata.uid });
    expect(unsupportedSpecAdmitHandler(pod!, [])).toEqual({ admit: true });
  });

  test("the kubectl run -it pod: its spec as the kubelet acts on it", () => {
    const pod = decodeApiPod(handwritten()).pod!;
    expect(pod.spec).toMatchObject({
      preemptionPolicy: "PreemptLowerPriority",
      enableServiceLinks: true,
      schedulerName: "default-scheduler",
      securityContext: {},
      priority: 0,
    });
    expect(pod.spec.tolerations).toEqual([
      { key: "node.kubernetes.io/not-ready", operator: "Exists", effect: "NoExecute", tolerationSeconds: 300 },
      { key: "node.kubernetes.io/unreachable", operator: "Exists", effect: "NoExecute", tolerationSeconds: 300 },
    ]);
    expect(pod.spec.containers[0]).toMatchObject({
      args: ["sh"],
      stdin: true,
      stdinOnce: true,
      tty: true,
      terminationMessagePath: "/dev/termination-log",
      terminationMessagePolicy: "File",
      imagePullPolicy: "IfNotPresent",
      resources: {},
    });
    // The status is the kubelet's to write; without readiness gates nothing of it is kept.
    expect(pod.status).toBeUndefined();
  });

  test("the same object in a static pod file: every field decodes, only its API references are refused", () => {
    const errors = decodeManifests(JSON.stringify(handwritten()), "/etc/kubernetes/manifests/shell.json").errors;
    expect(errors.map((e) => e.detail)).toEqual([expect.stringMatching(/^static pods may not reference /)]);
    const local = handwritten();
    delete local.spec.serviceAccountName;
    delete local.spec.serviceAccount;
    local.spec.volumes = [];
    local.spec.containers[0].volumeMounts = [];
    const r = decodeManifests(JSON.stringify(local), "/etc/kubernetes/manifests/shell.json");
    expect(r.errors).toEqual([]);
    expect(r.pods[0]!.metadata).not.toHaveProperty("resourceVersion");
    expect(r.pods[0]!.metadata).not.toHaveProperty("managedFields");
    expect(r.pods[0]!.status).toBeUndefined();
  });

  test("the API-server double stores pods with the same defaults, and they decode", () => {
    const pods = RESOURCES.find((r) => r.resource === "pods")!;
    const created = prepareCreate(
      pods,
      "default",
      { metadata: { name: "web" }, spec: { nodeName: "node-1", containers: [{ name: "app", image: "nginx", livenessProbe: { httpGet: { port: 80 } } }] } },
      { name: "admin", groups: [] },
    );
    expect(created.spec).toMatchObject({
      preemptionPolicy: "PreemptLowerPriority",
      enableServiceLinks: true,
      securityContext: {},
      tolerations: [
        { key: "node.kubernetes.io/not-ready", tolerationSeconds: 300 },
        { key: "node.kubernetes.io/unreachable", tolerationSeconds: 300 },
      ],
    });
    expect(created.spec.containers[0]).toMatchObject({
      imagePullPolicy: "Always",
      terminationMessagePath: "/dev/termination-log",
      terminationMessagePolicy: "File",
      resources: {},
      livenessProbe: { timeoutSeconds: 1, httpGet: { path: "/", scheme: "HTTP" } },
    });
    expect(decodeApiPod(created).errors).toEqual([]);
  });
});

/** The handwritten pod with `edit` applied. */
const edited = (edit: (p: Obj) => void): Obj => {
  const p = handwritten();
  edit(p);
  return p;
};

describe("other fields a v1.37 API server stores: accepted", () => {
  test.each<[string, (p: Obj) => void]>([
    ["preemptionPolicy Never (a PriorityClass that does not preempt)", (p) => (p.spec.preemptionPolicy = "Never")],
    [
      "topologySpreadConstraints",
      (p) =>
        (p.spec.topologySpreadConstraints = [
          {
            maxSkew: 1,
            topologyKey: "topology.kubernetes.io/zone",
            whenUnsatisfiable: "DoNotSchedule",
            labelSelector: { matchLabels: { run: "shell" } },
            nodeAffinityPolicy: "Honor",
            nodeTaintsPolicy: "Ignore",
          },
        ]),
    ],
    [
      "pod (anti-)affinity and preferred node affinity",
      (p) =>
        (p.spec.affinity = {
          podAntiAffinity: {
            preferredDuringSchedulingIgnoredDuringExecution: [
              { weight: 100, podAffinityTerm: { labelSelector: { matchLabels: { run: "shell" } }, topologyKey: "kubernetes.io/hostname" } },
            ],
          },
          nodeAffinity: {
            preferredDuringSchedulingIgnoredDuringExecution: [
              { weight: 1, preference: { matchExpressions: [{ key: "zone", operator: "In", values: ["a"] }] } },
            ],
          },
        }),
    ],
    ["readinessGates", (p) => (p.spec.readinessGates = [{ conditionType: "cloud.example.com/load-balancer-ready" }])],
    ["os linux", (p) => (p.spec.os = { name: "linux" })],
    ["overhead from a RuntimeClass", (p) => (p.spec.overhead = { cpu: "250m", memory: "120Mi" })],
    ["runtimeClassName empty", (p) => (p.spec.runtimeClassName = "")],
    ["a RuntimeClass", (p) => (p.spec.runtimeClassName = "gvisor")],
    ["hostUsers true", (p) => (p.spec.hostUsers = true)],
    ["hostUsers false", (p) => (p.spec.hostUsers = false)],
    ["hostnameOverride", (p) => (p.spec.hostnameOverride = "shell-0.example")],
    [
      "an owner with blockOwnerDeletion, finalizers",
      (p) =>
        Object.assign(p.metadata, {
          generateName: "shell-",
          ownerReferences: [
            {
              apiVersion: "apps/v1",
              kind: "ReplicaSet",
              name: "shell-6d4cf56db6",
              uid: "5b8e0c3a-1f2d-4e6a-9b7c-0d1e2f3a4b5c",
              controller: true,
              blockOwnerDeletion: true,
            },
          ],
          finalizers: ["example.com/keep"],
        }),
    ],
    ["a deletion in progress", (p) => Object.assign(p.metadata, { deletionTimestamp: "2026-03-02T11:00:00Z", deletionGracePeriodSeconds: 30 })],
    [
      "an ephemeral container added by kubectl debug",
      (p) =>
        (p.spec.ephemeralContainers = [
          {
            name: "debugger-x7k2p",
            image: "busybox",
            stdin: true,
            tty: true,
            targetContainerName: "shell",
            resources: {},
            terminationMessagePath: "/dev/termination-log",
            terminationMessagePolicy: "File",
            imagePullPolicy: "Always",
          },
        ]),
    ],
    [
      "container resizePolicy",
      (p) =>
        (p.spec.containers[0].resizePolicy = [
          { resourceName: "cpu", restartPolicy: "NotRequired" },
          { resourceName: "memory", restartPolicy: "RestartContainer" },
        ]),
    ],
    [
      "a gRPC probe with service null (no omitempty upstream)",
      (p) =>
        (p.spec.containers[0].livenessProbe = {
          grpc: { port: 9090, service: null },
          timeoutSeconds: 1,
          periodSeconds: 10,
          successThreshold: 1,
          failureThreshold: 3,
        }),
    ],
    [
      'an env resourceFieldRef with divisor "0" (an unset divisor as the server writes it)',
      (p) => (p.spec.containers[0].env = [{ name: "MEM", valueFrom: { resourceFieldRef: { resource: "limits.memory", divisor: "0" } } }]),
    ],
    ["a volume mount recursiveReadOnly Disabled", (p) => (p.spec.containers[0].volumeMounts[0].recursiveReadOnly = "Disabled")],
    ['a hostPath volume with type "" (HostPathUnset)', (p) => p.spec.volumes.push({ name: "logs", hostPath: { path: "/var/log", type: "" } })],
    [
      "securityContext with supplementalGroupsPolicy Merge and seLinuxChangePolicy",
      (p) => (p.spec.securityContext = { supplementalGroupsPolicy: "Merge", seLinuxChangePolicy: "Recursive", runAsUser: 1000 }),
    ],
    ["windowsOptions (a Linux kubelet ignores them)", (p) => (p.spec.containers[0].securityContext = { windowsOptions: { runAsUserName: "ContainerUser" } })],
    [
      "empty scheduling gates, resource claims and pod-level resources",
      (p) => Object.assign(p.spec, { schedulingGates: [], resourceClaims: [], resources: {} }),
    ],
    [
      "schedulingGroup and evictionResponders",
      (p) => Object.assign(p.spec, { schedulingGroup: { podGroupName: "train" }, evictionResponders: [{ name: "example.com/drain", priority: 10000 }] }),
    ],
  ])("%s", (_n, edit) => {
    const { pod, errors } = decodeApiPod(edited(edit));
    expect(errors.map((e) => e.message)).toEqual([]);
    expect(unsupportedSpecAdmitHandler(pod!, []).admit).toBe(true);
  });
});

// The fields the kubelet acts on and bunlet cannot (docs/pod-spec.md "default only" and "refused"):
// a value other than the default fails the pod at admission, naming the field and the value.
describe("values bunlet cannot honour: Failed/PodFeatureUnsupported naming field and value", () => {
  test.each<[string, (p: Obj) => void, string]>([
    [
      "pod-level resources",
      (p) => (p.spec.resources = { requests: { cpu: "1" }, limits: { cpu: "2" } }),
      'spec.resources: {"requests":{"cpu":"1"},"limits":{"cpu":"2"}} is not supported by bunlet: pod-level resources (PodLevelResources) are not implemented; set resources on the containers',
    ],
    ["resource claims", (p) => (p.spec.resourceClaims = [{ name: "gpu", resourceClaimTemplateName: "gpu" }]), "spec.resourceClaims: "],
    ["a container's resource claims", (p) => (p.spec.containers[0].resources = { claims: [{ name: "gpu" }] }), "spec.containers[0].resources.claims: "],
    [
      "supplementalGroupsPolicy Strict",
      (p) => (p.spec.securityContext = { supplementalGroupsPolicy: "Strict" }),
      'spec.securityContext.supplementalGroupsPolicy: "Strict" is not supported by bunlet: ',
    ],
    [
      "a per-container restartPolicy",
      (p) => (p.spec.containers[0].restartPolicy = "Never"),
      'spec.containers[0].restartPolicy: "Never" is not supported by bunlet: per-container restart policies (ContainerRestartRules) are not implemented',
    ],
    [
      "restartPolicyRules",
      (p) => (p.spec.containers[0].restartPolicyRules = [{ action: "Restart", exitCodes: { operator: "In", values: [42] } }]),
      "spec.containers[0].restartPolicyRules: ",
    ],
    [
      "a stop signal",
      (p) => (p.spec.containers[0].lifecycle = { stopSignal: "SIGUSR1" }),
      'spec.containers[0].lifecycle.stopSignal: "SIGUSR1" is not supported by bunlet: ',
    ],
    [
      "recursiveReadOnly Enabled",
      (p) => (p.spec.containers[0].volumeMounts[0].recursiveReadOnly = "Enabled"),
      'spec.containers[0].volumeMounts[0].recursiveReadOnly: "Enabled" is not supported by bunlet: ',
    ],
    [
      "an image volume",
      (p) => p.spec.volumes.push({ name: "model", image: { reference: "example.com/model:1", pullPolicy: "IfNotPresent" } }),
      "spec.volumes[1].image: ",
    ],
    [
      "an env var from a file",
      (p) => (p.spec.containers[0].env = [{ name: "TOKEN", valueFrom: { fileKeyRef: { volumeName: "kube-api-access-x8q2m", path: "token", key: "t" } } }]),
      "spec.containers[0].env[0].valueFrom.fileKeyRef: ",
    ],
    [
      "a podCertificate projection",
      (p) => p.spec.volumes[0].projected.sources.push({ podCertificate: { signerName: "example.com/s", keyType: "ED25519", credentialBundlePath: "c.pem" } }),
      "spec.volumes[0].projected.sources[3].podCertificate: ",
    ],
    [
      "HTTP/2 probes",
      (p) => (p.spec.containers[0].readinessProbe = { httpGet: { port: 80, path: "/", scheme: "HTTP", protocol: "HTTP2" } }),
      'spec.containers[0].readinessProbe.httpGet.protocol: "HTTP2" is not supported by bunlet: ',
    ],
  ])("%s", (_n, edit, fragment) => {
    const obj = edited(edit);
    const { pod, errors } = decodeApiPod(obj);
    expect(pod).toBeUndefined();
    const standIn = decodePod(unsupportedStandIn(obj, errors), "api", "", "api").pod!;
    const verdict = unsupportedSpecAdmitHandler(standIn, []);
    expect(verdict).toMatchObject({ admit: false, reason: POD_FEATURE_UNSUPPORTED });
    expect((verdict as { message: string }).message).toStartWith(`Pod uses fields bunlet does not support: ${fragment}`);
  });
});
