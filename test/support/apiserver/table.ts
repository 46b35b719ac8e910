// The Table (meta.k8s.io/v1) rendering kubectl asks for (`Accept: application/json;as=Table;…`):
// the columns of upstream's pkg/printers/internalversion for the resources served, so that
// `kubectl get nodes -o wide` prints what it prints against a real cluster.
import type { Obj } from "./store.ts";

interface Column {
  name: string;
  type: string;
  format?: string;
  priority?: number;
  description?: string;
}

/** "5s", "3m", "2d" — upstream's duration.HumanDuration, short form. */
export function age(ts: string | undefined, now = Date.now()): string {
  if (!ts) return "<unknown>";
  const s = Math.max(0, Math.floor((now - Date.parse(ts)) / 1000));
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 10) return `${m}m${s % 60 ? `${s % 60}s` : ""}`;
  if (m < 180) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h`;
  return `${Math.floor(h / 24)}d`;
}

function nodeStatus(n: Obj): string {
  const ready = (n.status?.conditions ?? []).find((c: Obj) => c.type === "Ready");
  let s = ready?.status === "True" ? "Ready" : ready?.status === "False" ? "NotReady" : "Unknown";
  if (n.spec?.unschedulable) s += ",SchedulingDisabled";
  return s;
}

function nodeRoles(n: Obj): string {
  const roles = Object.keys(n.metadata?.labels ?? {})
    .filter((k) => k.startsWith("node-role.kubernetes.io/"))
    .map((k) => k.slice(24));
  return roles.length ? roles.sort().join(",") : "<none>";
}

const addr = (n: Obj, type: string) => (n.status?.addresses ?? []).find((a: Obj) => a.type === type)?.address ?? "<none>";

const PRINTERS: Record<string, { columns: Column[]; cells: (o: Obj) => unknown[] }> = {
  nodes: {
    columns: [
      { name: "Name", type: "string", format: "name" },
      { name: "Status", type: "string" },
      { name: "Roles", type: "string" },
      { name: "Age", type: "string" },
      { name: "Version", type: "string" },
      { name: "Internal-IP", type: "string", priority: 1 },
      { name: "External-IP", type: "string", priority: 1 },
      { name: "OS-Image", type: "string", priority: 1 },
      { name: "Kernel-Version", type: "string", priority: 1 },
      { name: "Container-Runtime", type: "string", priority: 1 },
    ],
    cells: (n) => {
      const i = n.status?.nodeInfo ?? {};
      return [
        n.metadata.name,
        nodeStatus(n),
        nodeRoles(n),
        age(n.metadata.creationTimestamp),
        i.kubeletVersion ?? "",
        addr(n, "InternalIP"),
        addr(n, "ExternalIP"),
        i.osImage || "<unknown>",
        i.kernelVersion || "<unknown>",
        i.containerRuntimeVersion || "<unknown>",
      ];
    },
  },
  pods: {
    // kube-apiserver's printPod: READY ready/total, STATUS reason or phase (Terminating when deleting), RESTARTS summed.
    columns: [
      { name: "Name", type: "string", format: "name" },
      { name: "Ready", type: "string" },
      { name: "Status", type: "string" },
      { name: "Restarts", type: "string" },
      { name: "Age", type: "string" },
      { name: "IP", type: "string", priority: 1 },
      { name: "Node", type: "string", priority: 1 },
      { name: "Nominated Node", type: "string", priority: 1 },
      { name: "Readiness Gates", type: "string", priority: 1 },
    ],
    cells: (p) => {
      const cs: Obj[] = p.status?.containerStatuses ?? [];
      const total = p.spec?.containers?.length ?? 0;
      const ready = cs.filter((c) => c.ready).length;
      const waiting = cs.find((c) => c.state?.waiting?.reason)?.state.waiting.reason;
      let status = p.status?.reason || waiting || p.status?.phase || "Unknown";
      if (p.metadata.deletionTimestamp) status = "Terminating";
      const restarts = cs.reduce((n, c) => n + (c.restartCount ?? 0), 0);
      return [
        p.metadata.name,
        `${ready}/${total}`,
        status,
        String(restarts),
        age(p.metadata.creationTimestamp),
        p.status?.podIP || "<none>",
        p.spec?.nodeName || "<none>",
        "<none>",
        "<none>",
      ];
    },
  },
  events: {
    // kube-apiserver's printEvent: LAST SEEN, TYPE, REASON, OBJECT (kind/name, lower-case kind), MESSAGE.
    columns: [
      { name: "Last Seen", type: "string" },
      { name: "Type", type: "string" },
      { name: "Reason", type: "string" },
      { name: "Object", type: "string" },
      { name: "Subobject", type: "string", priority: 1 },
      { name: "Source", type: "string", priority: 1 },
      { name: "Message", type: "string" },
      { name: "First Seen", type: "string", priority: 1 },
      { name: "Count", type: "string", priority: 1 },
      { name: "Name", type: "string", format: "name", priority: 1 },
    ],
    cells: (e) => {
      const o = e.involvedObject ?? {};
      const source = [e.source?.component, e.source?.host].filter(Boolean).join(", ");
      return [
        age(e.lastTimestamp ?? e.eventTime),
        e.type ?? "",
        e.reason ?? "",
        `${String(o.kind ?? "").toLowerCase()}/${o.name ?? ""}`,
        o.fieldPath ?? "",
        source,
        e.message ?? "",
        age(e.firstTimestamp ?? e.eventTime),
        String(e.count ?? 1),
        e.metadata.name,
      ];
    },
  },
  // printSecret / printConfigMap / printServiceAccount.
  secrets: {
    columns: [
      { name: "Name", type: "string", format: "name" },
      { name: "Type", type: "string" },
      { name: "Data", type: "string" },
      { name: "Age", type: "string" },
    ],
    cells: (o) => [o.metadata.name, o.type ?? "", String(Object.keys(o.data ?? {}).length), age(o.metadata.creationTimestamp)],
  },
  configmaps: {
    columns: [
      { name: "Name", type: "string", format: "name" },
      { name: "Data", type: "string" },
      { name: "Age", type: "string" },
    ],
    cells: (o) => [o.metadata.name, String(Object.keys(o.data ?? {}).length + Object.keys(o.binaryData ?? {}).length), age(o.metadata.creationTimestamp)],
  },
  serviceaccounts: {
    columns: [
      { name: "Name", type: "string", format: "name" },
      { name: "Secrets", type: "string" },
      { name: "Age", type: "string" },
    ],
    cells: (o) => [o.metadata.name, String((o.secrets ?? []).length), age(o.metadata.creationTimestamp)],
  },
  leases: {
    columns: [
      { name: "Name", type: "string", format: "name" },
      { name: "Holder", type: "string" },
      { name: "Age", type: "string" },
    ],
    cells: (l) => [l.metadata.name, l.spec?.holderIdentity ?? "", age(l.metadata.creationTimestamp)],
  },
  namespaces: {
    columns: [
      { name: "Name", type: "string", format: "name" },
      { name: "Status", type: "string" },
      { name: "Age", type: "string" },
    ],
    cells: (n) => [n.metadata.name, n.status?.phase ?? "", age(n.metadata.creationTimestamp)],
  },
  // printClusterTrustBundle.
  clustertrustbundles: {
    columns: [
      { name: "Name", type: "string", format: "name" },
      { name: "SignerName", type: "string" },
    ],
    cells: (b) => [b.metadata.name, b.spec?.signerName || "<none>"],
  },
  certificatesigningrequests: {
    columns: [
      { name: "Name", type: "string", format: "name" },
      { name: "Age", type: "string" },
      { name: "SignerName", type: "string" },
      { name: "Requestor", type: "string" },
      { name: "RequestedDuration", type: "string" },
      { name: "Condition", type: "string" },
    ],
    cells: (c) => {
      const conds = (c.status?.conditions ?? []).map((x: Obj) => x.type);
      if (c.status?.certificate) conds.push("Issued");
      return [
        c.metadata.name,
        age(c.metadata.creationTimestamp),
        c.spec?.signerName ?? "",
        c.spec?.username ?? "",
        c.spec?.expirationSeconds ? `${Math.round(c.spec.expirationSeconds / 60)}m` : "<none>",
        conds.length ? conds.join(",") : "Pending",
      ];
    },
  },
};

const DEFAULT = {
  columns: [
    { name: "Name", type: "string", format: "name" },
    { name: "Created At", type: "date" },
  ] as Column[],
  cells: (o: Obj) => [o.metadata.name, o.metadata.creationTimestamp],
};

export function toTable(resource: string, objects: Obj[], resourceVersion: string): object {
  const p = PRINTERS[resource] ?? DEFAULT;
  return {
    kind: "Table",
    apiVersion: "meta.k8s.io/v1",
    metadata: { resourceVersion },
    columnDefinitions: p.columns.map((c) => ({ description: "", format: "", priority: 0, ...c })),
    rows: objects.map((o) => ({
      cells: p.cells(o),
      object: { kind: "PartialObjectMetadata", apiVersion: "meta.k8s.io/v1", metadata: o.metadata },
    })),
  };
}

export const wantsTable = (accept: string | undefined): boolean => !!accept && /as=Table/.test(accept.split(",")[0] ?? "");
