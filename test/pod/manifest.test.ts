import { describe, expect, test } from "bun:test";
import { decodeManifests, formatPath } from "../../src/pod/manifest.ts";
import { applyStaticPodDefaults, ConfigHashAnnotationKey, ConfigSourceAnnotationKey, staticPodUid } from "../../src/pod/static-pod.ts";

const good = `
apiVersion: v1
kind: Pod
metadata: { name: web }
spec:
  containers:
    - name: app
      image: bunlet.local/busybox:1
      command: [sleep, "3600"]
      resources: { requests: { memory: 64Mi, cpu: 100m }, limits: { memory: 64Mi, cpu: 1 } }
      livenessProbe: { exec: { command: ["true"] } }
`;

describe("decodeManifests", () => {
  test("decodes a pod with upstream defaults", () => {
    const { pods, errors } = decodeManifests(good, "/m/web.yaml");
    expect(errors).toEqual([]);
    const pod = pods[0]!;
    expect(pod.spec.restartPolicy).toBe("Always");
    expect(pod.spec.terminationGracePeriodSeconds).toBe(30);
    const c = pod.spec.containers[0]!;
    expect(c.imagePullPolicy).toBe("IfNotPresent");
    expect(c.resources.limits).toEqual({ memory: "64Mi", cpu: "1" });
    expect(c.livenessProbe).toMatchObject({ periodSeconds: 10, timeoutSeconds: 1, successThreshold: 1, failureThreshold: 3, initialDelaySeconds: 0 });
  });

  test.each([
    [
      "valueFrom",
      `containers: [{ name: a, image: x, env: [{ name: A, valueFrom: { fieldRef: { fieldPath: x } } }] }]`,
      "spec.containers[0].env[0].valueFrom.fieldRef.fieldPath",
      "Unsupported value",
    ],
    [
      "bad quantity",
      `containers: [{ name: a, image: x, resources: { limits: { memory: 12XB } } }]`,
      "spec.containers[0].resources.limits.memory",
      "invalid quantity",
    ],
    [
      "two handlers",
      `containers: [{ name: a, image: x, readinessProbe: { exec: { command: [x] }, tcpSocket: { port: 1 } } }]`,
      "spec.containers[0].readinessProbe",
      "exactly one",
    ],
    [
      "unknown volume type",
      `containers: [{ name: a, image: x }]\n  volumes: [{ name: v, nfs: { server: s, path: / } }]`,
      "spec.volumes[0].nfs",
      "not supported by bunlet",
    ],
    ["API reference", `containers: [{ name: a, image: x }]\n  volumes: [{ name: v, configMap: { name: c } }]`, "", "static pods may not reference configmaps"],
    [
      "missing mount volume",
      `containers: [{ name: a, image: x, volumeMounts: [{ name: nope, mountPath: /x }] }]`,
      "spec.containers[0].volumeMounts[0].name",
      "not found",
    ],
    ["restartPolicy", `restartPolicy: Sometimes\n  containers: [{ name: a, image: x }]`, "spec.restartPolicy", ""],
    ["no containers", `containers: []`, "spec.containers", "at least one"],
  ])("rejects %s naming the file and field", (_n, spec, field, msg) => {
    const text = `apiVersion: v1\nkind: Pod\nmetadata: { name: p }\nspec:\n  ${spec}\n---\n${good}`;
    const { pods, errors } = decodeManifests(text, "/m/bad.yaml");
    expect(pods.map((p) => p.metadata.name)).toEqual(["web"]);
    expect(errors.length).toBeGreaterThanOrEqual(1);
    expect(errors[0]!.file).toBe("/m/bad.yaml");
    expect(errors[0]!.field).toContain(field);
    expect(errors[0]!.message).toContain("/m/bad.yaml");
    expect(errors[0]!.message).toContain(field);
    expect(errors[0]!.message).toContain(msg);
  });

  // Every v1 field decodes in a file too (a manifest saved with `kubectl get -o yaml`, or written
  // with fields a real API server defaults); a key that is no v1 field is still refused by name.
  test("a static pod with the fields an API server stores decodes; the server's bookkeeping is dropped", () => {
    const text = `apiVersion: v1
kind: Pod
metadata:
  name: web
  resourceVersion: "48213"
  generation: 2
  managedFields: [{ manager: kubectl-client-side-apply, operation: Update, apiVersion: v1, time: "2026-03-02T10:15:04Z", fieldsType: FieldsV1, fieldsV1: { "f:spec": {} } }]
  finalizers: [example.com/keep]
spec:
  preemptionPolicy: PreemptLowerPriority
  enableServiceLinks: true
  schedulerName: default-scheduler
  securityContext: {}
  topologySpreadConstraints: [{ maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: ScheduleAnyway }]
  tolerations: [{ key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute, tolerationSeconds: 300 }]
  os: { name: linux }
  containers:
    - name: app
      image: bunlet.local/busybox:1
      stdin: true
      stdinOnce: true
      tty: true
      terminationMessagePath: /dev/termination-log
      terminationMessagePolicy: File
      resources: {}
      resizePolicy: [{ resourceName: cpu, restartPolicy: NotRequired }]
`;
    const { pods, errors } = decodeManifests(text, "/m/web.yaml");
    expect(errors).toEqual([]);
    expect(pods[0]!.metadata).not.toHaveProperty("resourceVersion");
    expect(pods[0]!.metadata).not.toHaveProperty("managedFields");
    expect(pods[0]!.metadata.finalizers).toEqual(["example.com/keep"]);
    expect(pods[0]!.spec.containers[0]).toMatchObject({ stdin: true, stdinOnce: true, tty: true });
  });

  test.each([
    ["a misspelt container field", `containers: [{ name: a, image: x, imagePullPolcy: Always }]`, "spec.containers[0].imagePullPolcy"],
    [
      "a misspelt spec field",
      `containers: [{ name: a, image: x }]
  restartPolice: Never`,
      "spec.restartPolice",
    ],
    [
      "a misspelt scheduling field",
      `containers: [{ name: a, image: x }]
  topologySpreadConstraints: [{ maxSkew: 1, topologyKey: k, whenUnsatisfiable: DoNotSchedule, labelSelectr: {} }]`,
      "spec.topologySpreadConstraints[0].labelSelectr",
    ],
  ])("a typo is still refused, naming the file and the field: %s", (_n, spec, field) => {
    const { pods, errors } = decodeManifests(`apiVersion: v1\nkind: Pod\nmetadata: { name: p }\nspec:\n  ${spec}\n`, "/m/typo.yaml");
    expect(pods).toEqual([]);
    expect(errors.map((e) => e.message)).toEqual([
      `invalid pod manifest /m/typo.yaml: ${field}: field not supported by bunlet: not a field of the v1 Pod (Kubernetes v1.37); check the spelling`,
    ]);
  });

  test("PodList and List bodies, JSON too", () => {
    const list = JSON.stringify({
      kind: "PodList",
      items: [
        { metadata: { name: "a" }, spec: { containers: [{ name: "c", image: "i" }] } },
        { metadata: { name: "b" }, spec: { containers: [{ name: "c", image: "i:latest" }] } },
      ],
    });
    const r = decodeManifests(list, "http://x/pods");
    expect(r.errors).toEqual([]);
    expect(r.pods.map((p) => p.metadata.name)).toEqual(["a", "b"]);
    expect(r.pods[1]!.spec.containers[0]!.imagePullPolicy).toBe("Always");
  });

  test("a bare array of pods", () => {
    const r = decodeManifests(
      JSON.stringify([
        { metadata: { name: "a" }, spec: { containers: [{ name: "c", image: "i" }] } },
        { metadata: { name: "b" }, spec: {} },
      ]),
      "u",
    );
    expect(r.pods.map((p) => p.metadata.name)).toEqual(["a"]);
    expect(r.errors[0]!.field).toBe("[1].spec.containers");
  });

  test("unsupported kind and broken YAML are errors", () => {
    expect(decodeManifests("kind: Deployment\nmetadata: {name: x}", "f").errors[0]!.field).toBe("kind");
    expect(decodeManifests("a: [", "f").errors.length).toBe(1);
  });

  test.each([
    [["spec", "containers", 0, "env", 1, "value"], "spec.containers[0].env[1].value"],
    [[], ""],
    [["metadata"], "metadata"],
  ])("formatPath %j", (p, want) => expect(formatPath(p)).toBe(want));
});

describe("static pod defaults", () => {
  const pod = decodeManifests(good, "/m/web.yaml").pods[0]!;

  test("name, namespace, nodeName, annotations, toleration, phase", () => {
    const d = applyStaticPodDefaults(pod, { nodeName: "Node-1", source: "file", location: "/m/web.yaml" });
    expect(d.metadata.name).toBe("web-node-1");
    expect(d.metadata.namespace).toBe("default");
    expect(d.spec.nodeName).toBe("Node-1");
    expect(d.metadata.uid).toMatch(/^[0-9a-f]{32}$/);
    expect(d.metadata.annotations?.[ConfigHashAnnotationKey]).toBe(d.metadata.uid);
    expect(d.metadata.annotations?.[ConfigSourceAnnotationKey]).toBe("file");
    expect(d.spec.tolerations).toEqual([{ operator: "Exists", effect: "NoExecute" }]);
    expect(d.status?.phase).toBe("Pending");
    expect(pod.metadata.name).toBe("web"); // input untouched
  });

  test("UID is stable for the same content/node/source and changes otherwise", () => {
    const u = staticPodUid(pod, "n1", "file", "/m/web.yaml");
    expect(staticPodUid(structuredClone(pod), "n1", "file", "/m/web.yaml")).toBe(u);
    expect(staticPodUid(pod, "n2", "file", "/m/web.yaml")).not.toBe(u);
    expect(staticPodUid(pod, "n1", "file", "/m/other.yaml")).not.toBe(u);
    expect(staticPodUid(pod, "n1", "http", "/m/web.yaml")).not.toBe(u);
    const edited = structuredClone(pod);
    edited.spec.containers[0]!.image = "other";
    expect(staticPodUid(edited, "n1", "file", "/m/web.yaml")).not.toBe(u);
  });

  test("an explicit UID is kept; http pods get no toleration", () => {
    const p = structuredClone(pod);
    p.metadata.uid = "fixed";
    const d = applyStaticPodDefaults(p, { nodeName: "n", source: "http", location: "http://x" });
    expect(d.metadata.uid).toBe("fixed");
    expect(d.metadata.annotations?.[ConfigSourceAnnotationKey]).toBe("http");
    expect(d.spec.tolerations).toBeUndefined();
  });

  test.each([
    ["system-node-critical", undefined, 2000001000],
    ["system-cluster-critical", undefined, 2000000000],
    ["system-node-critical", 2000001000, 2000001000], // kubeadm writes both
    ["system-node-critical", 5, 5], // a given priority is kept (no admission checks static pods)
    ["my-class", undefined, undefined], // user classes live in the API: priority stays unset (0)
    [undefined, undefined, undefined],
  ] as const)("priorityClassName %p with priority %p → spec.priority %p", (cls, prio, want) => {
    const p = structuredClone(pod);
    if (cls !== undefined) p.spec.priorityClassName = cls;
    if (prio !== undefined) p.spec.priority = prio;
    const d = applyStaticPodDefaults(p, { nodeName: "n", source: "file", location: "/m/web.yaml" });
    expect(d.spec.priority).toBe(want);
    // The UID is of the manifest as written, before defaults.
    expect(d.metadata.uid).toBe(staticPodUid(p, "n", "file", "/m/web.yaml"));
  });
});

describe("examples/manifests", () => {
  test("every example decodes without errors and covers the three QoS classes", async () => {
    const { readStaticPods } = await import("../../src/pod/sources/file.ts");
    const { getPodQOS } = await import("../../src/pod/qos.ts");
    const dir = new URL("../../examples/manifests", import.meta.url).pathname;
    const r = await readStaticPods(dir, "node1");
    expect(r.errors).toEqual([]);
    expect(new Set(r.pods.map((p) => getPodQOS(p)))).toEqual(new Set(["Guaranteed", "Burstable", "BestEffort"]));
  });
});
