// docs/pods.md "Pod spec support" against the validator, both ways: every v1 field is in its table; every
// field the schema (src/pod/types.ts) knows is listed; every field listed refused is refused from any
// source, naming the field; every field listed as needing the API server is accepted in an API pod and
// refused in a static pod ("static pods may not reference …", upstream's), or refused everywhere when
// the schema does not know it; every field listed honoured or pending is one the schema accepts and
// does not refuse outright.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { decodePod } from "../../src/pod/manifest.ts";
import { podSchema } from "../../src/pod/types.ts";

// The v1 objects (k8s.io/api/core/v1, Kubernetes v1.31) the docs tables cover, field by field.
const V1: Record<string, readonly string[]> = {
  PodSpec: [
    "volumes", "initContainers", "containers", "ephemeralContainers", "restartPolicy", "terminationGracePeriodSeconds",
    "activeDeadlineSeconds", "dnsPolicy", "nodeSelector", "serviceAccountName", "serviceAccount", "automountServiceAccountToken",
    "nodeName", "hostNetwork", "hostPID", "hostIPC", "shareProcessNamespace", "securityContext", "imagePullSecrets", "hostname",
    "subdomain", "affinity", "schedulerName", "tolerations", "hostAliases", "priorityClassName", "priority", "dnsConfig",
    "readinessGates", "runtimeClassName", "enableServiceLinks", "preemptionPolicy", "overhead", "topologySpreadConstraints",
    "setHostnameAsFQDN", "os", "hostUsers", "schedulingGates", "resourceClaims",
  ],
  Container: [
    "name", "image", "command", "args", "workingDir", "ports", "envFrom", "env", "resources", "resizePolicy", "restartPolicy",
    "volumeMounts", "volumeDevices", "livenessProbe", "readinessProbe", "startupProbe", "lifecycle", "terminationMessagePath",
    "terminationMessagePolicy", "imagePullPolicy", "securityContext", "stdin", "stdinOnce", "tty",
  ],
  Probe: ["exec", "httpGet", "tcpSocket", "grpc", "initialDelaySeconds", "timeoutSeconds", "periodSeconds", "successThreshold", "failureThreshold", "terminationGracePeriodSeconds"],
  "Lifecycle handler": ["exec", "httpGet", "tcpSocket", "sleep"],
  "Volume sources": [
    "hostPath", "emptyDir", "gcePersistentDisk", "awsElasticBlockStore", "gitRepo", "secret", "nfs", "iscsi", "glusterfs",
    "persistentVolumeClaim", "rbd", "flexVolume", "cinder", "cephfs", "flocker", "downwardAPI", "fc", "azureFile", "configMap",
    "vsphereVolume", "quobyte", "azureDisk", "photonPersistentDisk", "projected", "portworxVolume", "scaleIO", "storageos", "csi",
    "ephemeral", "image",
  ],
  PodSecurityContext: [
    "seLinuxOptions", "windowsOptions", "runAsUser", "runAsGroup", "runAsNonRoot", "supplementalGroups", "supplementalGroupsPolicy",
    "fsGroup", "sysctls", "fsGroupChangePolicy", "seccompProfile", "appArmorProfile",
  ],
  SecurityContext: [
    "capabilities", "privileged", "seLinuxOptions", "windowsOptions", "runAsUser", "runAsGroup", "runAsNonRoot",
    "readOnlyRootFilesystem", "allowPrivilegeEscalation", "procMount", "seccompProfile", "appArmorProfile",
  ],
};

type Status = "honoured" | "pending" | "refused" | "needs API server";
const STATUSES: readonly Status[] = ["honoured", "pending", "refused", "needs API server"];

function readTables(): Record<string, Map<string, Status>> {
  const page = readFileSync(new URL("../../docs/pods.md", import.meta.url), "utf8");
  const start = page.indexOf("\n## Pod spec support\n");
  if (start < 0) throw new Error('docs/pods.md has no "## Pod spec support" section');
  const end = page.indexOf("\n## ", start + 1);
  const section = page.slice(start, end < 0 ? undefined : end);
  const out: Record<string, Map<string, Status>> = {};
  let current: Map<string, Status> | undefined;
  for (const line of section.split("\n")) {
    const h = /^### (.+)$/.exec(line);
    if (h) out[h[1]!.trim()] = current = new Map();
    const row = /^\| `([A-Za-z]+)` \| ([^|]+) \|/.exec(line);
    if (row && current) {
      const status = row[2]!.trim() as Status;
      if (!STATUSES.includes(status)) throw new Error(`docs/pods.md Pod spec support: ${row[1]}: unknown status "${status}"`);
      if (current.has(row[1]!)) throw new Error(`docs/pods.md Pod spec support: ${row[1]} listed twice`);
      current.set(row[1]!, status);
    }
  }
  return out;
}

/** The object schema under zod wrappers (optional, default, pipe/transform, array). */
function objectKeys(schema: unknown): string[] {
  let s = schema as { _zod: { def: Record<string, unknown> } };
  for (let i = 0; i < 10; i++) {
    const def = s._zod.def;
    if (def.type === "object") return Object.keys(def.shape as object);
    s = (def.innerType ?? def.in ?? def.element) as typeof s;
    if (!s) break;
  }
  throw new Error("not an object schema");
}

const shape = (s: unknown, key: string): unknown => {
  let x = s as { _zod: { def: Record<string, unknown> } };
  while (x._zod.def.type !== "object") x = (x._zod.def.innerType ?? x._zod.def.in ?? x._zod.def.element) as typeof x;
  return (x._zod.def.shape as Record<string, unknown>)[key];
};
const spec = shape(podSchema, "spec");
const container = shape(spec, "containers");
const SCHEMA: Record<string, string[]> = {
  PodSpec: objectKeys(spec),
  Container: objectKeys(container),
  Probe: objectKeys(shape(container, "livenessProbe")),
  "Lifecycle handler": objectKeys(shape(shape(container, "lifecycle"), "postStart")),
  "Volume sources": objectKeys(shape(spec, "volumes")).filter((k) => k !== "name"),
  PodSecurityContext: objectKeys(shape(spec, "securityContext")),
  SecurityContext: objectKeys(shape(container, "securityContext")),
};

/** A minimal valid pod with `field` set (to `value`, by default `{}`) on the object the table describes. */
function podWith(table: string, field: string, value: unknown = {}): unknown {
  const c: Record<string, unknown> = { name: "c", image: "img" };
  const pod = { apiVersion: "v1", kind: "Pod", metadata: { name: "p" }, spec: { containers: [c] } as Record<string, unknown> };
  const set: Record<string, () => void> = {
    PodSpec: () => (pod.spec[field] = value),
    Container: () => (c[field] = value),
    Probe: () => (c.livenessProbe = { exec: { command: ["true"] }, [field]: value }),
    "Lifecycle handler": () => (c.lifecycle = { postStart: { exec: { command: ["true"] }, [field]: value } }),
    "Volume sources": () => (pod.spec.volumes = [{ name: "v", [field]: value }]),
    PodSecurityContext: () => (pod.spec.securityContext = { [field]: value }),
    SecurityContext: () => (c.securityContext = { [field]: value }),
  };
  set[table]!();
  return pod;
}

/** Valid values of the fields that reference API objects (accepted in API pods, refused in static ones). */
const API_SAMPLES: Record<string, unknown> = {
  "PodSpec.serviceAccountName": "builder",
  "PodSpec.serviceAccount": "builder",
  "PodSpec.imagePullSecrets": [{ name: "registry" }],
  "Container.envFrom": [{ configMapRef: { name: "settings" } }],
  "Volume sources.secret": { secretName: "tls" },
  "Volume sources.configMap": { name: "settings" },
};

const tables = readTables();

describe.each(Object.keys(V1))("docs/pods.md Pod spec support: %s", (table) => {
  const rows = tables[table] ?? new Map<string, Status>();

  test("lists exactly the v1 fields", () => {
    expect([...rows.keys()].sort()).toEqual([...V1[table]!].sort());
  });

  test("every field the validator knows is listed", () => {
    expect(SCHEMA[table]!.filter((f) => !rows.has(f))).toEqual([]);
  });

  test("every field listed honoured or pending is accepted by the validator, not refused by it", () => {
    const wrong: string[] = [];
    for (const [f, s] of rows) {
      if (s !== "honoured" && s !== "pending") continue;
      if (!SCHEMA[table]!.includes(f)) wrong.push(`${f}: not in the schema`);
      // Set to {} the field may be the wrong type, but never refused outright.
      const refusal = decodePod(podWith(table, f), "p.yaml").errors.find((e) => /API server|not supported/.test(e.detail) && e.field.split(/[.[\]]/).includes(f));
      if (refusal) wrong.push(`${f}: ${refusal.message}`);
    }
    expect(wrong).toEqual([]);
  });

  test("every field listed refused is refused from every source, naming the field", () => {
    const wrong: string[] = [];
    for (const [f, s] of rows) {
      if (s !== "refused" && !(s === "needs API server" && !SCHEMA[table]!.includes(f))) continue;
      for (const source of ["static", "api"] as const) {
        const r = decodePod(podWith(table, f), "p.yaml", "", source);
        // A refusal, not a type error of the {} value: "not supported" (unknown field, or the schema's
        // own refusal) or the API-server reason.
        const named = r.errors.filter((e) => e.field.split(/[.[\]]/).includes(f) && /not supported|API server/.test(e.detail));
        if (!named.length) wrong.push(`${f} (${source}): ${r.errors.length ? `refused without naming it (${r.errors.map((e) => e.message).join("; ")})` : "accepted"}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  test("every field listed as needing the API server runs in API pods and refuses a static pod", () => {
    const wrong: string[] = [];
    for (const [f, s] of rows) {
      if (s !== "needs API server" || !SCHEMA[table]!.includes(f)) continue;
      const value = API_SAMPLES[`${table}.${f}`];
      if (value === undefined) {
        wrong.push(`${f}: add a sample value to API_SAMPLES`);
        continue;
      }
      const api = decodePod(podWith(table, f, value), "p.yaml", "", "api");
      if (api.errors.length) wrong.push(`${f} (api): ${api.errors.map((e) => e.message).join("; ")}`);
      const stat = decodePod(podWith(table, f, value), "p.yaml");
      if (!stat.errors.some((e) => /static pods may not reference|API server/.test(e.detail))) wrong.push(`${f} (static): ${stat.errors.length ? stat.errors.map((e) => e.message).join("; ") : "accepted"}`);
    }
    expect(wrong).toEqual([]);
  });
});
