// What the double serves: the resources the kubelet (and kubectl pointed at the node) touch, with
// their discovery documents as kube-apiserver publishes them (/api, /apis, /api/v1, /apis/<g>/<v>).
export interface ResourceDef {
  group: string; // "" for core
  version: string;
  resource: string; // plural
  singular: string;
  kind: string;
  namespaced: boolean;
  shortNames?: string[];
  /** Subresources served: status (spec kept), approval (CSR conditions only), token (TokenRequest) and eviction (policy/v1 Eviction), create only. */
  subresources: string[];
}

const VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"];

export const RESOURCES: ResourceDef[] = [
  {
    group: "",
    version: "v1",
    resource: "namespaces",
    singular: "namespace",
    kind: "Namespace",
    namespaced: false,
    shortNames: ["ns"],
    subresources: ["status"],
  },
  { group: "", version: "v1", resource: "nodes", singular: "node", kind: "Node", namespaced: false, shortNames: ["no"], subresources: ["status"] },
  { group: "", version: "v1", resource: "pods", singular: "pod", kind: "Pod", namespaced: true, shortNames: ["po"], subresources: ["status", "eviction"] },
  { group: "", version: "v1", resource: "secrets", singular: "secret", kind: "Secret", namespaced: true, subresources: [] },
  { group: "", version: "v1", resource: "configmaps", singular: "configmap", kind: "ConfigMap", namespaced: true, shortNames: ["cm"], subresources: [] },
  {
    group: "",
    version: "v1",
    resource: "serviceaccounts",
    singular: "serviceaccount",
    kind: "ServiceAccount",
    namespaced: true,
    shortNames: ["sa"],
    subresources: ["token"],
  },
  // Listed and watched by the node for its pods' service environment variables; no cluster IP is allocated.
  { group: "", version: "v1", resource: "services", singular: "service", kind: "Service", namespaced: true, shortNames: ["svc"], subresources: ["status"] },
  { group: "", version: "v1", resource: "events", singular: "event", kind: "Event", namespaced: true, shortNames: ["ev"], subresources: [] },
  { group: "coordination.k8s.io", version: "v1", resource: "leases", singular: "lease", kind: "Lease", namespaced: true, subresources: [] },
  {
    group: "certificates.k8s.io",
    version: "v1",
    resource: "certificatesigningrequests",
    singular: "certificatesigningrequest",
    kind: "CertificateSigningRequest",
    namespaced: false,
    shortNames: ["csr"],
    subresources: ["status", "approval"],
  },
  // Beta since 1.33 (served when the apiserver enables certificates.k8s.io/v1beta1), the version newest
  // kubelets read first after v1; cluster-scoped, readable by every authenticated user.
  // Create-only reviews a kubelet's webhook authenticator and authorizer send (reviews.ts); never stored.
  {
    group: "authentication.k8s.io",
    version: "v1",
    resource: "tokenreviews",
    singular: "tokenreview",
    kind: "TokenReview",
    namespaced: false,
    subresources: [],
  },
  {
    group: "authorization.k8s.io",
    version: "v1",
    resource: "subjectaccessreviews",
    singular: "subjectaccessreview",
    kind: "SubjectAccessReview",
    namespaced: false,
    subresources: [],
  },
  {
    group: "certificates.k8s.io",
    version: "v1beta1",
    resource: "clustertrustbundles",
    singular: "clustertrustbundle",
    kind: "ClusterTrustBundle",
    namespaced: false,
    subresources: [],
  },
];

export const apiVersionOf = (d: ResourceDef): string => (d.group ? `${d.group}/${d.version}` : d.version);

/** "nodes" or "leases.coordination.k8s.io", as upstream names a resource in Status messages. */
export const qualifiedResource = (d: ResourceDef): string => (d.group ? `${d.resource}.${d.group}` : d.resource);

export function findResource(group: string, version: string, resource: string): ResourceDef | undefined {
  return RESOURCES.find((r) => r.group === group && r.version === version && r.resource === resource);
}

/** Subresources that only create another kind (kube-apiserver's discovery names its group/version/kind). */
const CREATE_ONLY: Record<string, { group: string; version: string; kind: string }> = {
  token: { group: "authentication.k8s.io", version: "v1", kind: "TokenRequest" },
  eviction: { group: "policy", version: "v1", kind: "Eviction" },
};

export function resourceList(group: string, version: string): object | undefined {
  const defs = RESOURCES.filter((r) => r.group === group && r.version === version);
  if (!defs.length) return undefined;
  const resources: object[] = [];
  for (const d of defs) {
    resources.push({
      name: d.resource,
      singularName: d.singular,
      namespaced: d.namespaced,
      kind: d.kind,
      verbs: VERBS,
      ...(d.shortNames ? { shortNames: d.shortNames } : {}),
    });
    for (const s of d.subresources) {
      const createOnly = CREATE_ONLY[s];
      resources.push(
        createOnly
          ? { name: `${d.resource}/${s}`, singularName: "", namespaced: d.namespaced, ...createOnly, verbs: ["create"] }
          : { name: `${d.resource}/${s}`, singularName: "", namespaced: d.namespaced, kind: d.kind, verbs: ["get", "patch", "update"] },
      );
    }
  }
  return { kind: "APIResourceList", apiVersion: "v1", groupVersion: group ? `${group}/${version}` : version, resources };
}

export function apiVersions(serverAddress: string): object {
  return { kind: "APIVersions", versions: ["v1"], serverAddressByClientCIDRs: [{ clientCIDR: "0.0.0.0/0", serverAddress }] };
}

/** Kubernetes version priority: GA, then beta, then alpha (newest first within each). */
function versionRank(v: string): [number, number, number] {
  const m = /^v(\d+)(?:(beta|alpha)(\d+))?$/.exec(v);
  if (!m) return [3, 0, 0];
  return [m[2] === "alpha" ? 2 : m[2] === "beta" ? 1 : 0, -Number(m[1]), -Number(m[3] ?? 0)];
}
const byPriority = (a: string, b: string) => {
  const [x, y] = [versionRank(a), versionRank(b)];
  return x[0] - y[0] || x[1] - y[1] || x[2] - y[2];
};

export function apiGroupList(): object {
  const groups = [...new Set(RESOURCES.filter((r) => r.group).map((r) => r.group))].map((name) => {
    const versions = [...new Set(RESOURCES.filter((r) => r.group === name).map((r) => r.version))]
      .sort(byPriority)
      .map((version) => ({ groupVersion: `${name}/${version}`, version }));
    return { name, versions, preferredVersion: versions[0] };
  });
  return { kind: "APIGroupList", apiVersion: "v1", groups };
}

export const VERSION_INFO = {
  major: "1",
  minor: "31",
  gitVersion: "v1.31.0-bunlet-apiserver-double",
  gitCommit: "0000000000000000000000000000000000000000",
  gitTreeState: "clean",
  buildDate: "2026-01-01T00:00:00Z",
  goVersion: "go1.22.0",
  compiler: "gc",
  platform: "linux/amd64",
};
