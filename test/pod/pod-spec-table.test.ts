// docs/pod-spec.md against the decoder, both ways: every v1 field (Kubernetes v1.37) is in its table;
// every field the schema (src/pod/schema/) knows is listed; fields listed honoured, ignored or not
// acted on decode; a field listed default only accepts its default and refuses another value naming
// the field and the value; a field listed refused is refused from any source, naming it; a field
// listed as needing the API server is accepted in an API pod and refused in a static pod.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { decodePod } from "../../src/pod/manifest.ts";
import { podSchema } from "../../src/pod/types.ts";

// The v1 objects (k8s.io/api@v0.37.2 core/v1, apimachinery meta/v1 ObjectMeta), field by field.
const V1: Record<string, readonly string[]> = {
  ObjectMeta: [
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
  ],
  PodSpec: [
    "volumes",
    "initContainers",
    "containers",
    "ephemeralContainers",
    "restartPolicy",
    "terminationGracePeriodSeconds",
    "activeDeadlineSeconds",
    "dnsPolicy",
    "nodeSelector",
    "serviceAccountName",
    "serviceAccount",
    "automountServiceAccountToken",
    "nodeName",
    "hostNetwork",
    "hostPID",
    "hostIPC",
    "shareProcessNamespace",
    "securityContext",
    "imagePullSecrets",
    "hostname",
    "subdomain",
    "affinity",
    "schedulerName",
    "tolerations",
    "hostAliases",
    "priorityClassName",
    "priority",
    "dnsConfig",
    "readinessGates",
    "runtimeClassName",
    "enableServiceLinks",
    "preemptionPolicy",
    "overhead",
    "topologySpreadConstraints",
    "setHostnameAsFQDN",
    "os",
    "hostUsers",
    "schedulingGates",
    "resourceClaims",
    "resources",
    "hostnameOverride",
    "schedulingGroup",
    "evictionResponders",
  ],
  Container: [
    "name",
    "image",
    "command",
    "args",
    "workingDir",
    "ports",
    "envFrom",
    "env",
    "resources",
    "resizePolicy",
    "restartPolicy",
    "restartPolicyRules",
    "volumeMounts",
    "volumeDevices",
    "livenessProbe",
    "readinessProbe",
    "startupProbe",
    "lifecycle",
    "terminationMessagePath",
    "terminationMessagePolicy",
    "imagePullPolicy",
    "securityContext",
    "stdin",
    "stdinOnce",
    "tty",
  ],
  Probe: [
    "exec",
    "httpGet",
    "tcpSocket",
    "grpc",
    "initialDelaySeconds",
    "timeoutSeconds",
    "periodSeconds",
    "successThreshold",
    "failureThreshold",
    "terminationGracePeriodSeconds",
  ],
  Lifecycle: ["postStart", "preStop", "stopSignal"],
  "Lifecycle handler": ["exec", "httpGet", "tcpSocket", "sleep"],
  VolumeMount: ["name", "readOnly", "recursiveReadOnly", "mountPath", "subPath", "mountPropagation", "subPathExpr", "bindMountOptions"],
  EnvVarSource: ["fieldRef", "resourceFieldRef", "configMapKeyRef", "secretKeyRef", "fileKeyRef"],
  ResourceRequirements: ["limits", "requests", "claims"],
  "Volume sources": [
    "hostPath",
    "emptyDir",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "gitRepo",
    "secret",
    "nfs",
    "iscsi",
    "glusterfs",
    "persistentVolumeClaim",
    "rbd",
    "flexVolume",
    "cinder",
    "cephfs",
    "flocker",
    "downwardAPI",
    "fc",
    "azureFile",
    "configMap",
    "vsphereVolume",
    "quobyte",
    "azureDisk",
    "photonPersistentDisk",
    "projected",
    "portworxVolume",
    "scaleIO",
    "storageos",
    "csi",
    "ephemeral",
    "image",
  ],
  PodSecurityContext: [
    "seLinuxOptions",
    "windowsOptions",
    "runAsUser",
    "runAsGroup",
    "runAsNonRoot",
    "supplementalGroups",
    "supplementalGroupsPolicy",
    "fsGroup",
    "sysctls",
    "fsGroupChangePolicy",
    "seccompProfile",
    "appArmorProfile",
    "seLinuxChangePolicy",
  ],
  SecurityContext: [
    "capabilities",
    "privileged",
    "seLinuxOptions",
    "windowsOptions",
    "runAsUser",
    "runAsGroup",
    "runAsNonRoot",
    "readOnlyRootFilesystem",
    "allowPrivilegeEscalation",
    "procMount",
    "seccompProfile",
    "appArmorProfile",
  ],
};

type Status = "honoured" | "ignored" | "default only" | "refused" | "not acted on" | "needs API server";
const STATUSES: readonly Status[] = ["honoured", "ignored", "default only", "refused", "not acted on", "needs API server"];

function readTables(): Record<string, Map<string, Status>> {
  const doc = readFileSync(new URL("../../docs/pod-spec.md", import.meta.url), "utf8");
  const out: Record<string, Map<string, Status>> = {};
  let current: Map<string, Status> | undefined;
  for (const line of doc.split("\n")) {
    const h = /^#### (.+)$/.exec(line);
    if (h) out[h[1]!.trim()] = current = new Map();
    const row = /^\| `([A-Za-z.]+)` \| ([^|]+) \|/.exec(line);
    if (row && current) {
      const status = row[2]!.trim() as Status;
      if (!STATUSES.includes(status)) throw new Error(`docs/pod-spec.md: ${row[1]}: unknown status "${status}"`);
      if (current.has(row[1]!)) throw new Error(`docs/pod-spec.md: ${row[1]} listed twice`);
      current.set(row[1]!, status);
    }
  }
  return out;
}

type Def = { _zod: { def: Record<string, unknown> } };
/** The object schema under zod wrappers (optional, default, pipe/transform, array). */
function objectOf(schema: unknown): Def {
  let s = schema as Def;
  for (let i = 0; i < 10 && s; i++) {
    if (s._zod.def.type === "object") return s;
    s = (s._zod.def.innerType ?? s._zod.def.in ?? s._zod.def.element) as Def;
  }
  throw new Error("not an object schema");
}
const objectKeys = (s: unknown) => Object.keys(objectOf(s)._zod.def.shape as object);
const shape = (s: unknown, key: string): unknown => (objectOf(s)._zod.def.shape as Record<string, unknown>)[key];

const spec = shape(podSchema, "spec");
const container = shape(spec, "containers");
const lifecycle = shape(container, "lifecycle");
const SCHEMA: Record<string, string[]> = {
  ObjectMeta: objectKeys(shape(podSchema, "metadata")),
  PodSpec: objectKeys(spec),
  Container: objectKeys(container),
  Probe: objectKeys(shape(container, "livenessProbe")),
  Lifecycle: objectKeys(lifecycle),
  "Lifecycle handler": objectKeys(shape(lifecycle, "postStart")),
  VolumeMount: objectKeys(shape(container, "volumeMounts")),
  EnvVarSource: objectKeys(shape(shape(container, "env"), "valueFrom")),
  ResourceRequirements: objectKeys(shape(container, "resources")),
  "Volume sources": objectKeys(shape(spec, "volumes")).filter((k) => k !== "name"),
  PodSecurityContext: objectKeys(shape(spec, "securityContext")),
  SecurityContext: objectKeys(shape(container, "securityContext")),
};

/** A minimal valid pod with `field` set to `value` on the object the table describes. */
function podWith(table: string, field: string, value: unknown): unknown {
  const c: Record<string, unknown> = { name: "c", image: "img" };
  const pod = { apiVersion: "v1", kind: "Pod", metadata: { name: "p" } as Record<string, unknown>, spec: { containers: [c] } as Record<string, unknown> };
  const set: Record<string, () => void> = {
    ObjectMeta: () => (pod.metadata[field] = value),
    PodSpec: () => (pod.spec[field] = value),
    Container: () => (c[field] = value),
    Probe: () => (c.livenessProbe = { exec: { command: ["true"] }, [field]: value }),
    Lifecycle: () => (c.lifecycle = { [field]: value }),
    "Lifecycle handler": () => (c.lifecycle = { postStart: { exec: { command: ["true"] }, [field]: value } }),
    VolumeMount: () => ((pod.spec.volumes = [{ name: "v", emptyDir: {} }]), (c.volumeMounts = [{ name: "v", mountPath: "/v", [field]: value }])),
    EnvVarSource: () => (c.env = [{ name: "E", valueFrom: { [field]: value } }]),
    ResourceRequirements: () => (c.resources = { [field]: value }),
    "Volume sources": () => (pod.spec.volumes = [{ name: "v", [field]: value }]),
    PodSecurityContext: () => (pod.spec.securityContext = { [field]: value }),
    SecurityContext: () => (c.securityContext = { [field]: value }),
  };
  set[table]!();
  return pod;
}

/** Real values of the fields listed ignored or not acted on: each decodes from the API without an error. */
const ACCEPTED_SAMPLES: Record<string, unknown> = {
  "ObjectMeta.generateName": "web-",
  "ObjectMeta.finalizers": ["example.com/keep"],
  "ObjectMeta.resourceVersion": "48213",
  "ObjectMeta.generation": 3,
  "ObjectMeta.selfLink": "/api/v1/namespaces/default/pods/p",
  "ObjectMeta.managedFields": [
    { manager: "kubectl", operation: "Apply", apiVersion: "v1", time: "2026-03-02T10:15:04Z", fieldsType: "FieldsV1", fieldsV1: { "f:spec": {} } },
  ],
  "PodSpec.schedulerName": "my-scheduler",
  "PodSpec.preemptionPolicy": "Never",
  "PodSpec.enableServiceLinks": false,
  "PodSpec.topologySpreadConstraints": [
    {
      maxSkew: 1,
      topologyKey: "topology.kubernetes.io/zone",
      whenUnsatisfiable: "DoNotSchedule",
      labelSelector: { matchLabels: { app: "web" } },
      matchLabelKeys: ["pod-template-hash"],
    },
  ],
  "PodSpec.schedulingGates": [{ name: "example.com/quota" }],
  "PodSpec.schedulingGroup": { podGroupName: "training-0" },
  "PodSpec.evictionResponders": [{ name: "example.com/drainer", priority: 10000 }],
  "Container.resizePolicy": [
    { resourceName: "cpu", restartPolicy: "NotRequired" },
    { resourceName: "memory", restartPolicy: "RestartContainer" },
  ],
  "PodSecurityContext.seLinuxChangePolicy": "MountOption",
  "PodSecurityContext.windowsOptions": { gmsaCredentialSpecName: "gmsa", runAsUserName: "ContainerUser", hostProcess: false },
  "SecurityContext.windowsOptions": { runAsUserName: "ContainerUser" },
};

/** Fields listed default only: the values accepted, then one refused. */
const DEFAULT_ONLY: Record<string, { accepted: unknown[]; refused: unknown }> = {
  "PodSpec.resourceClaims": { accepted: [undefined, []], refused: [{ name: "gpu", resourceClaimTemplateName: "gpu-template" }] },
  "PodSpec.resources": { accepted: [undefined, {}, { requests: {}, limits: {} }], refused: { limits: { cpu: "2", memory: "1Gi" } } },
  "Container.restartPolicyRules": { accepted: [undefined, []], refused: [{ action: "Restart", exitCodes: { operator: "In", values: [42] } }] },
  "VolumeMount.recursiveReadOnly": { accepted: [undefined, "Disabled"], refused: "Enabled" },
  "VolumeMount.bindMountOptions": { accepted: [undefined, []], refused: ["noexec"] },
  "ResourceRequirements.claims": { accepted: [undefined, []], refused: [{ name: "gpu" }] },
  "PodSecurityContext.supplementalGroupsPolicy": { accepted: [undefined, "Merge"], refused: "Strict" },
};

/** Valid values of the fields that reference API objects (accepted in API pods, refused in static ones). */
const API_SAMPLES: Record<string, unknown> = {
  "PodSpec.serviceAccountName": "builder",
  "PodSpec.serviceAccount": "builder",
  "PodSpec.imagePullSecrets": [{ name: "registry" }],
  "Container.envFrom": [{ configMapRef: { name: "settings" } }],
  "EnvVarSource.configMapKeyRef": { name: "settings", key: "k" },
  "EnvVarSource.secretKeyRef": { name: "creds", key: "k" },
  "Volume sources.secret": { secretName: "tls" },
  "Volume sources.configMap": { name: "settings" },
  "Volume sources.persistentVolumeClaim": { claimName: "data" },
};

const tables = readTables();
const errorsOf = (obj: unknown, source: "static" | "api" = "api") => decodePod(obj, "p.yaml", "", source).errors;
const names = (e: { field: string }, f: string) => e.field.split(/[.[\]]/).includes(f);

test("docs/pod-spec.md has a table for each v1 object, and the nested fields", () => {
  expect(Object.keys(tables).sort()).toEqual([...Object.keys(V1), "Nested fields", "Status"].sort());
});

describe.each(Object.keys(V1))("docs/pod-spec.md: %s", (table) => {
  const rows = tables[table] ?? new Map<string, Status>();
  const each = (status: Status) => [...rows].filter(([, s]) => s === status).map(([f]) => f);

  test("lists exactly the v1 fields", () => {
    expect([...rows.keys()].sort()).toEqual([...V1[table]!].sort());
  });

  test("every field the decoder knows is listed", () => {
    expect(SCHEMA[table]!.filter((f) => !rows.has(f))).toEqual([]);
  });

  test("every field listed honoured, ignored or not acted on is never refused for being there", () => {
    const wrong: string[] = [];
    for (const f of [...each("honoured"), ...each("ignored"), ...each("not acted on")]) {
      if (!SCHEMA[table]!.includes(f)) wrong.push(`${f}: not in the schema`);
      // Set to {} the field may be the wrong type, but never refused outright.
      const refusal = errorsOf(podWith(table, f, {}), "static").find((e) => /API server|not supported/.test(e.detail) && names(e, f));
      if (refusal) wrong.push(`${f}: ${refusal.message}`);
    }
    expect(wrong).toEqual([]);
  });

  test("every field listed ignored or not acted on decodes with a real value", () => {
    const wrong: string[] = [];
    for (const f of [...each("ignored"), ...each("not acted on")]) {
      const value = ACCEPTED_SAMPLES[`${table}.${f}`];
      if (value === undefined) wrong.push(`${f}: add a sample value to ACCEPTED_SAMPLES`);
      else for (const e of errorsOf(podWith(table, f, value))) wrong.push(`${f}: ${e.message}`);
    }
    expect(wrong).toEqual([]);
  });

  test("every field listed default only accepts its default and refuses another value, naming both", () => {
    const wrong: string[] = [];
    for (const f of each("default only")) {
      const sample = DEFAULT_ONLY[`${table}.${f}`];
      if (!sample) {
        wrong.push(`${f}: add its values to DEFAULT_ONLY`);
        continue;
      }
      for (const v of sample.accepted) for (const e of errorsOf(podWith(table, f, v))) wrong.push(`${f}=${JSON.stringify(v)}: ${e.message}`);
      for (const source of ["static", "api"] as const) {
        // The value as the message shows it (cut to 60 characters), then why.
        const shown = JSON.stringify(sample.refused).slice(0, 40);
        const refused = errorsOf(podWith(table, f, sample.refused), source).filter(
          (e) => names(e, f) && e.detail.startsWith(shown) && e.detail.includes(" is not supported by bunlet: "),
        );
        if (refused.length !== 1) wrong.push(`${f} (${source}): ${JSON.stringify(sample.refused)} not refused naming it`);
      }
    }
    expect(wrong).toEqual([]);
  });

  test("every field listed refused is refused from every source, naming the field", () => {
    const wrong: string[] = [];
    for (const f of each("refused")) {
      for (const source of ["static", "api"] as const) {
        const r = errorsOf(podWith(table, f, {}), source);
        if (!r.some((e) => names(e, f) && /not supported/.test(e.detail)))
          wrong.push(`${f} (${source}): ${r.length ? `refused without naming it (${r.map((e) => e.message).join("; ")})` : "accepted"}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  test("every field listed as needing the API server runs in API pods and refuses a static pod", () => {
    const wrong: string[] = [];
    for (const f of each("needs API server")) {
      const value = API_SAMPLES[`${table}.${f}`];
      if (value === undefined) {
        wrong.push(`${f}: add a sample value to API_SAMPLES`);
        continue;
      }
      const api = errorsOf(podWith(table, f, value));
      if (api.length) wrong.push(`${f} (api): ${api.map((e) => e.message).join("; ")}`);
      const stat = errorsOf(podWith(table, f, value), "static");
      if (!stat.some((e) => /static pods may not reference/.test(e.detail)))
        wrong.push(`${f} (static): ${stat.length ? stat.map((e) => e.message).join("; ") : "accepted"}`);
    }
    expect(wrong).toEqual([]);
  });
});

// The nested rows: a pod with the field at its default decodes; set otherwise, it is refused by path.
const base = (c: Record<string, unknown> = {}, s: Record<string, unknown> = {}) => ({
  metadata: { name: "p" },
  spec: { containers: [{ name: "c", image: "img", ...c }], ...s },
});
const withVolume = (v: Record<string, unknown>) => base({}, { volumes: [{ name: "v", ...v }] });
const NESTED: Record<string, { accepted: unknown[]; refused?: unknown; path: string }> = {
  "httpGet.protocol": {
    accepted: [base({ livenessProbe: { httpGet: { port: 80, protocol: "HTTP1" } } }), base({ lifecycle: { preStop: { httpGet: { port: 80 } } } })],
    refused: base({ readinessProbe: { httpGet: { port: 80, protocol: "HTTP2" } } }),
    path: "spec.containers[0].readinessProbe.httpGet.protocol",
  },
  "grpc.mode": {
    accepted: [base({ livenessProbe: { grpc: { port: 9090, mode: "Plaintext" } } })],
    refused: base({ livenessProbe: { grpc: { port: 9090, mode: "TLS" } } }),
    path: "spec.containers[0].livenessProbe.grpc.mode",
  },
  "grpc.service": {
    accepted: [base({ livenessProbe: { grpc: { port: 9090, service: null } } }), base({ livenessProbe: { grpc: { port: 9090, service: "health" } } })],
    path: "",
  },
  "emptyDir.mode": {
    accepted: [withVolume({ emptyDir: { mode: 0o777 } })],
    refused: withVolume({ emptyDir: { mode: 0o1777 } }),
    path: "spec.volumes[0].emptyDir.mode",
  },
  defaultUser: {
    accepted: [withVolume({ downwardAPI: { defaultMode: 0o644 } })],
    refused: withVolume({ projected: { sources: [], defaultUser: 1000 } }),
    path: "spec.volumes[0].projected.defaultUser",
  },
  user: {
    accepted: [withVolume({ downwardAPI: { items: [{ path: "n", fieldRef: { fieldPath: "metadata.name" } }] } })],
    refused: withVolume({ downwardAPI: { items: [{ path: "n", fieldRef: { fieldPath: "metadata.name" }, user: 1000 }] } }),
    path: "spec.volumes[0].downwardAPI.items[0].user",
  },
  podCertificate: {
    accepted: [],
    refused: withVolume({
      projected: { sources: [{ podCertificate: { signerName: "example.com/signer", keyType: "ED25519", credentialBundlePath: "creds.pem" } }] },
    }),
    path: "spec.volumes[0].projected.sources[0].podCertificate",
  },
};

describe("docs/pod-spec.md: Nested fields", () => {
  test("every row is checked", () => {
    expect([...(tables["Nested fields"] ?? new Map()).keys()].sort()).toEqual(Object.keys(NESTED).sort());
  });
  test.each(Object.entries(NESTED))("%s", (_f, { accepted, refused, path }) => {
    for (const p of accepted) expect(errorsOf(p, "static").map((e) => e.message)).toEqual([]);
    if (refused === undefined) return;
    const errors = errorsOf(refused);
    expect(errors.map((e) => e.field)).toEqual([path]);
    expect(errors[0]!.detail).toContain("is not supported by bunlet: ");
  });
});
