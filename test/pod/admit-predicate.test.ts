import { describe, expect, test } from "bun:test";
import {
  admissionNodeFrom,
  admitPredicates,
  matchesNodeAffinity,
  predicateAdmitHandler,
  tolerates,
  type AdmissionNode,
} from "../../src/pod/admit-predicate.ts";
import type { PodLike } from "../../src/pod/pod-like.ts";

const node: AdmissionNode = {
  name: "n1",
  labels: { "kubernetes.io/os": "linux", "kubernetes.io/hostname": "n1", zone: "a", gen: "5" },
  taints: [],
  allocatable: { cpu: "2", memory: "4Gi", "ephemeral-storage": "10Gi", pods: "110" },
};

const pod = (spec: Record<string, unknown> = {}, requests?: Record<string, string>, annotations?: Record<string, string>): PodLike =>
  ({
    metadata: { name: "p", namespace: "default", uid: "u", annotations },
    spec: { nodeName: "n1", containers: [{ name: "c", image: "i", ...(requests ? { resources: { requests } } : {}) }], ...spec },
  }) as unknown as PodLike;

describe("predicate admit handler", () => {
  test.each([
    ["fits", pod({}, { cpu: "500m", memory: "1Gi" }), [], { admit: true }],
    [
      "OutOfcpu (millicores)",
      pod({}, { cpu: "1500m" }),
      [pod({}, { cpu: "1" })],
      { admit: false, reason: "OutOfcpu", message: "Node didn't have enough resource: cpu, requested: 1500, used: 1000, capacity: 2000" },
    ],
    [
      "OutOfmemory (bytes)",
      pod({}, { memory: "5Gi" }),
      [],
      { admit: false, reason: "OutOfmemory", message: "Node didn't have enough resource: memory, requested: 5368709120, used: 0, capacity: 4294967296" },
    ],
    ["OutOfephemeral-storage", pod({}, { "ephemeral-storage": "11Gi" }), [], { admit: false, reason: "OutOfephemeral-storage" }],
    ["cpu before memory", pod({}, { cpu: "3", memory: "5Gi" }), [], { admit: false, reason: "OutOfcpu" }],
    [
      "nodeSelector mismatch",
      pod({ nodeSelector: { zone: "b" } }),
      [],
      { admit: false, reason: "NodeAffinity", message: "Predicate NodeAffinity failed: node(s) didn't match Node's node affinity/selector" },
    ],
    [
      "OS selector first",
      pod({ nodeSelector: { "kubernetes.io/os": "windows" } }, { cpu: "3" }),
      [],
      { admit: false, reason: "PodOSSelectorNodeLabelDoesNotMatch" },
    ],
    [
      "another node's pod",
      pod({ nodeName: "n2" }),
      [],
      { admit: false, reason: "NodeName", message: "Predicate NodeName failed: node(s) didn't match the requested node name" },
    ],
    [
      "host port taken",
      pod({ containers: [{ name: "c", image: "i", ports: [{ containerPort: 80, hostPort: 8080 }] }] }),
      [pod({ containers: [{ name: "c", image: "i", ports: [{ containerPort: 80, hostPort: 8080, hostIP: "127.0.0.1" }] }] })],
      { admit: false, reason: "NodePorts" },
    ],
    [
      "host port on another protocol is free",
      pod({ containers: [{ name: "c", image: "i", ports: [{ containerPort: 80, hostPort: 8080, protocol: "UDP" }] }] }),
      [pod({ containers: [{ name: "c", image: "i", ports: [{ containerPort: 80, hostPort: 8080 }] }] })],
      { admit: true },
    ],
  ] as const)("%s", (_what, p, others, expected) => {
    expect(admitPredicates(p, [...others], node)).toMatchObject(expected);
  });

  test("untolerated NoExecute taint → TaintToleration; tolerated, NoSchedule-only or a static pod → admitted", () => {
    const tainted = {
      ...node,
      taints: [
        { key: "dedicated", value: "db", effect: "NoExecute" },
        { key: "x", effect: "NoSchedule" },
      ],
    };
    expect(admitPredicates(pod(), [], tainted)).toEqual({
      admit: false,
      reason: "TaintToleration",
      message: "Predicate TaintToleration failed: node(s) had untolerated taint",
    });
    expect(admitPredicates(pod({ tolerations: [{ key: "dedicated", operator: "Equal", value: "db", effect: "NoExecute" }] }), [], tainted).admit).toBe(true);
    expect(admitPredicates(pod({ tolerations: [{ operator: "Exists" }] }), [], tainted).admit).toBe(true);
    expect(admitPredicates(pod({}, undefined, { "kubernetes.io/config.source": "file" }), [], tainted).admit).toBe(true);
    expect(tolerates({ key: "dedicated", operator: "Equal", value: "web" }, { key: "dedicated", value: "db", effect: "NoExecute" })).toBe(false);
  });

  test.each([
    ["In", [{ key: "zone", operator: "In", values: ["a", "b"] }], true],
    ["NotIn", [{ key: "zone", operator: "NotIn", values: ["a"] }], false],
    ["Exists", [{ key: "gen", operator: "Exists" }], true],
    ["DoesNotExist", [{ key: "gpu", operator: "DoesNotExist" }], true],
    ["Gt", [{ key: "gen", operator: "Gt", values: ["4"] }], true],
    ["Lt", [{ key: "gen", operator: "Lt", values: ["4"] }], false],
  ])("required node affinity: %s", (_op, matchExpressions, expected) => {
    const p = pod({ affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions }] } } } });
    expect(matchesNodeAffinity(p, node)).toBe(expected);
  });

  test("required node affinity: terms are ORed, an empty term matches nothing, matchFields on metadata.name", () => {
    const terms = (nodeSelectorTerms: unknown[]) =>
      pod({ affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms } } } });
    expect(
      matchesNodeAffinity(
        terms([
          { matchExpressions: [{ key: "zone", operator: "In", values: ["z"] }] },
          { matchFields: [{ key: "metadata.name", operator: "In", values: ["n1"] }] },
        ]),
        node,
      ),
    ).toBe(true);
    expect(matchesNodeAffinity(terms([{}]), node)).toBe(false);
  });

  // upstream rejectPodAdmissionBasedOnOSField: spec.os.name against the kubelet's own OS, with or
  // without the Node object, before any resource check.
  const known = (): AdmissionNode | undefined => node;
  const notYet = (): AdmissionNode | undefined => undefined;
  test.each([
    [
      "windows pod, Node known",
      { os: { name: "windows" } },
      known,
      { admit: false, reason: "PodOSNotSupported", message: "Failed to admit pod as the OS field doesn't match node OS" },
    ],
    [
      "windows pod, before the Node object",
      { os: { name: "windows" } },
      notYet,
      { admit: false, reason: "PodOSNotSupported", message: "Failed to admit pod as the OS field doesn't match node OS" },
    ],
    [
      "windows pod asking for too much cpu: the OS first",
      { os: { name: "windows" }, containers: [{ name: "c", image: "i", resources: { requests: { cpu: "64" } } }] },
      known,
      { admit: false, reason: "PodOSNotSupported" },
    ],
    ["linux pod", { os: { name: "linux" } }, known, { admit: true }],
    ["linux pod, before the Node object", { os: { name: "linux" } }, notYet, { admit: true }],
  ])("spec.os: %s", (_n, s, nodeOf, expected) => {
    expect(predicateAdmitHandler({ maxPods: 110, node: nodeOf })(pod({ ...s }), [])).toMatchObject(expected);
  });

  test("without the Node object only the pod count is checked; the Node object is read from the API's", () => {
    const h = predicateAdmitHandler({ maxPods: 1, node: () => undefined });
    expect(h(pod({}, { cpu: "100" }), []).admit).toBe(true);
    expect(h(pod(), [pod()])).toMatchObject({ reason: "OutOfpods" });
    expect(
      admissionNodeFrom({
        metadata: { name: "n1", labels: { a: "b" } },
        spec: { taints: [{ key: "k", effect: "NoExecute" }] },
        status: { allocatable: { cpu: "1" } },
      }),
    ).toEqual({ name: "n1", labels: { a: "b" }, taints: [{ key: "k", effect: "NoExecute" }], allocatable: { cpu: "1" } });
    expect(admissionNodeFrom({ metadata: { name: "n1" }, status: {} })).toBeUndefined();
  });
});
