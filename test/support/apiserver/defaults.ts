// Server-side defaulting and validation the kubelet relies on (k8s.io/kubernetes/pkg/apis/*/v1
// defaults, registry strategies): metadata the server owns (uid, creationTimestamp, namespace,
// generateName), Node allocatable = capacity when unset, Namespace phase Active, CSR requester
// identity (spec.username/groups/uid) filled from the authenticated user, and a pod's defaults as a
// real server stores them (SetDefaults_PodSpec/Container/Probe, the Priority and
// DefaultTolerationSeconds admission plugins).
import { randomUUID } from "node:crypto";
import { apiVersionOf, type ResourceDef } from "./resources.ts";
import type { User } from "./auth.ts";
import type { Obj } from "./store.ts";
import { badRequest, invalid } from "./status.ts";

const rfc3339 = (ms = Date.now()) => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(".000Z", "Z");

export function prepareCreate(d: ResourceDef, ns: string, obj: Obj, user: User): Obj {
  if (typeof obj !== "object" || obj === null || Array.isArray(obj)) throw badRequest("the body of the request must be a JSON object");
  const meta = { ...(obj.metadata ?? {}) };
  if (!meta.name && meta.generateName) meta.name = `${meta.generateName}${randomUUID().replace(/-/g, "").slice(0, 5)}`;
  if (!meta.name) throw invalid(d, "", "metadata.name", "Required value: name or generateName is required");
  if (d.namespaced) {
    if (meta.namespace && meta.namespace !== ns) throw badRequest("the namespace of the provided object does not match the namespace sent on the request");
    meta.namespace = ns;
  } else delete meta.namespace;
  meta.uid = randomUUID();
  meta.creationTimestamp = rfc3339();
  delete meta.resourceVersion;
  delete meta.deletionTimestamp;
  const out: Obj = { ...obj, kind: d.kind, apiVersion: apiVersionOf(d), metadata: meta };
  DEFAULTS[d.resource]?.(out, user);
  return out;
}

/** Applies the per-kind defaults again after an update (e.g. allocatable from capacity). */
export function prepareUpdate(d: ResourceDef, old: Obj, next: Obj, sub: string | undefined): Obj {
  const out: Obj = { ...next, kind: d.kind, apiVersion: apiVersionOf(d) };
  // Fields the server owns are kept from the stored object.
  out.metadata = {
    ...next.metadata,
    uid: old.metadata.uid,
    creationTimestamp: old.metadata.creationTimestamp,
    name: old.metadata.name,
    ...(d.namespaced ? { namespace: old.metadata.namespace } : {}),
  };
  if (sub === "status") {
    // Status strategies keep the spec (nodes: metadata may change too, as the kubelet's label reconcile relies on).
    out.spec = old.spec;
    if (d.resource !== "nodes") out.metadata = { ...old.metadata };
  } else if (sub === "approval") {
    out.spec = old.spec;
    out.metadata = { ...old.metadata };
    out.status = { ...old.status, conditions: next.status?.conditions ?? [] };
  } else if (d.subresources.includes("status")) {
    out.status = old.status; // the main resource ignores status changes
  }
  if (d.resource === "nodes") defaultNodeStatus(out);
  return out;
}

/** The DefaultTolerationSeconds admission plugin: not-ready and unreachable NoExecute for 300 s, unless tolerated already. */
function defaultTolerations(tolerations: Obj[]): Obj[] {
  const tolerated = (key: string) => tolerations.some((t) => (t.key === key || !t.key) && (t.effect === "NoExecute" || !t.effect));
  const add = ["node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"].filter((k) => !tolerated(k));
  return [...tolerations, ...add.map((key) => ({ key, operator: "Exists", effect: "NoExecute", tolerationSeconds: 300 }))];
}

/** SetDefaults_Container and SetDefaults_Probe (resources is a struct upstream: always written). */
function defaultContainer(c: Obj): void {
  const last =
    String(c.image ?? "")
      .split("/")
      .pop() ?? "";
  const tag = String(c.image ?? "").includes("@") ? "digest" : last.includes(":") ? last.slice(last.indexOf(":") + 1) : "latest";
  c.imagePullPolicy ??= tag === "latest" ? "Always" : "IfNotPresent";
  c.terminationMessagePath ??= "/dev/termination-log";
  c.terminationMessagePolicy ??= "File";
  c.resources ??= {};
  for (const p of [c.livenessProbe, c.readinessProbe, c.startupProbe]) {
    if (!p) continue;
    p.timeoutSeconds ??= 1;
    p.periodSeconds ??= 10;
    p.successThreshold ??= 1;
    p.failureThreshold ??= 3;
    if (p.httpGet) Object.assign(p.httpGet, { path: p.httpGet.path ?? "/", scheme: p.httpGet.scheme ?? "HTTP" });
  }
}

function defaultNodeStatus(n: Obj): void {
  n.spec ??= {};
  n.status ??= {};
  if (n.status.capacity && !n.status.allocatable) n.status.allocatable = { ...n.status.capacity };
}

const DEFAULTS: Record<string, (o: Obj, user: User) => void> = {
  nodes: defaultNodeStatus,
  namespaces: (o) => {
    o.spec = { finalizers: ["kubernetes"], ...(o.spec ?? {}) };
    o.status = { phase: "Active", ...(o.status ?? {}) };
  },
  leases: (o) => {
    o.spec ??= {};
  },
  certificatesigningrequests: (o, user) => {
    const spec = o.spec ?? {};
    if (!spec.request) throw invalid({ kind: "CertificateSigningRequest" } as ResourceDef, o.metadata.name, "spec.request", "Required value");
    if (!spec.signerName) throw invalid({ kind: "CertificateSigningRequest" } as ResourceDef, o.metadata.name, "spec.signerName", "Required value");
    o.spec = { ...spec, username: user.name, groups: user.groups, ...(user.uid ? { uid: user.uid } : {}) };
    o.status = {};
  },
  pods: (o) => {
    // The Priority admission plugin: spec.priority from the built-in system classes (others: as given,
    // else 0), and their preemptionPolicy (every class here preempts lower priorities).
    const systemPriority = ({ "system-cluster-critical": 2_000_000_000, "system-node-critical": 2_000_001_000 } as Record<string, number>)[
      o.spec?.priorityClassName ?? ""
    ];
    o.spec = {
      restartPolicy: "Always",
      dnsPolicy: "ClusterFirst",
      schedulerName: "default-scheduler",
      terminationGracePeriodSeconds: 30,
      securityContext: {},
      enableServiceLinks: true,
      priority: 0,
      preemptionPolicy: "PreemptLowerPriority",
      ...(o.spec ?? {}),
      ...(systemPriority !== undefined ? { priority: systemPriority } : {}),
    };
    o.spec.tolerations = defaultTolerations(o.spec.tolerations ?? []);
    for (const c of [...(o.spec.initContainers ?? []), ...(o.spec.containers ?? [])]) defaultContainer(c);
    o.status = { phase: "Pending", qosClass: "BestEffort", ...(o.status ?? {}) };
  },
  // ValidateClusterTrustBundle (the parts a projection relies on): PEM trust anchors required; a
  // bundle of a signer is named with the signer's name (slashes → colons) and a colon as prefix.
  clustertrustbundles: (o) => {
    const ctb = { kind: "ClusterTrustBundle" } as ResourceDef;
    const spec = o.spec ?? {};
    if (!spec.trustBundle || !/-----BEGIN CERTIFICATE-----/.test(spec.trustBundle))
      throw invalid(ctb, o.metadata.name, "spec.trustBundle", 'Invalid value: "<value omitted>": at least one trust anchor must be provided');
    const prefix = spec.signerName ? `${String(spec.signerName).replace(/\//g, ":")}:` : "";
    if (spec.signerName && !o.metadata.name.startsWith(prefix))
      throw invalid(
        ctb,
        o.metadata.name,
        "metadata.name",
        `Invalid value: "${o.metadata.name}": ClusterTrustBundle for signerName ${spec.signerName} must be named with prefix ${prefix}`,
      );
    if (!spec.signerName && o.metadata.name.includes(":"))
      throw invalid(
        ctb,
        o.metadata.name,
        "metadata.name",
        `Invalid value: "${o.metadata.name}": ClusterTrustBundle without signer name must not have ":" in its name`,
      );
  },
  // SetDefaults_Secret.
  secrets: (o) => {
    o.type ??= "Opaque";
  },
  events: (o) => {
    o.firstTimestamp ??= null;
    o.count ??= 1;
  },
};
