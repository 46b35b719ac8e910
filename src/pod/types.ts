// The v1 Pod subset bunlet runs, as a zod schema (field names exactly as upstream core/v1). Anything
// outside the subset is rejected with the field path rather than silently ignored: a static pod that
// asks for something bunlet cannot do must not run half-configured. Defaults are upstream's
// (SetDefaults_Pod/Container/Probe): restartPolicy Always, terminationGracePeriodSeconds 30,
// probe periodSeconds 10 / timeoutSeconds 1 / successThreshold 1 / failureThreshold 3.
import { z } from "zod";
import { parseQuantity } from "../config/quantity.ts";
import type { PodLike } from "./pod-like.ts";

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

const quantity = z
  .union([z.string(), z.number()])
  .transform((v, ctx) => {
    const s = String(v);
    try {
      parseQuantity(s);
    } catch (e) {
      ctx.addIssue({ code: "custom", message: `invalid quantity "${s}": ${(e as Error).message}` });
      return z.NEVER;
    }
    return s;
  });

const resourceName = z.string().regex(/^([a-z0-9.-]+\/)?[a-zA-Z0-9._-]+$/, "invalid resource name");
const resourceList = z.record(resourceName, quantity);

const intOrString = z.union([z.number().int(), z.string().min(1)]);
const port = z.number().int().min(1).max(65535);

const execAction = z.strictObject({ command: z.array(z.string()).min(1) });
const httpGetAction = z.strictObject({
  path: z.string().default("/"),
  port: intOrString,
  host: z.string().optional(),
  scheme: z.enum(["HTTP", "HTTPS"]).default("HTTP"),
  httpHeaders: z.array(z.strictObject({ name: z.string().min(1), value: z.string() })).optional(),
});
const tcpSocketAction = z.strictObject({ port: intOrString, host: z.string().optional() });

const probe = z
  .strictObject({
    exec: execAction.optional(),
    httpGet: httpGetAction.optional(),
    tcpSocket: tcpSocketAction.optional(),
    initialDelaySeconds: z.number().int().min(0).default(0),
    periodSeconds: z.number().int().min(1).default(10),
    timeoutSeconds: z.number().int().min(1).default(1),
    successThreshold: z.number().int().min(1).default(1),
    failureThreshold: z.number().int().min(1).default(3),
    terminationGracePeriodSeconds: z.number().int().min(1).optional(),
  })
  .superRefine((p, ctx) => {
    const n = [p.exec, p.httpGet, p.tcpSocket].filter(Boolean).length;
    if (n !== 1) ctx.addIssue({ code: "custom", message: "must specify exactly one of exec, httpGet, tcpSocket" });
  });

const envVar = z.strictObject({ name: z.string().min(1), value: z.string().default("") });

const containerPort = z.strictObject({
  name: z.string().regex(DNS_LABEL).max(15).optional(),
  containerPort: port,
  hostPort: port.optional(),
  hostIP: z.string().optional(),
  protocol: z.enum(["TCP", "UDP", "SCTP"]).default("TCP"),
});

const securityContext = z.strictObject({
  runAsUser: z.number().int().min(0).optional(),
  runAsGroup: z.number().int().min(0).optional(),
  runAsNonRoot: z.boolean().optional(),
  privileged: z.boolean().optional(),
  readOnlyRootFilesystem: z.boolean().optional(),
  allowPrivilegeEscalation: z.boolean().optional(),
});

const volumeMount = z.strictObject({
  name: z.string().min(1),
  mountPath: z.string().startsWith("/", "must be an absolute path"),
  readOnly: z.boolean().optional(),
  subPath: z.string().optional(),
});

const container = z
  .strictObject({
    name: z.string().regex(DNS_LABEL, "must be a DNS label (lowercase alphanumerics and '-')").max(63),
    image: z.string().min(1),
    imagePullPolicy: z.enum(["Always", "IfNotPresent", "Never"]).optional(),
    command: z.array(z.string()).optional(),
    args: z.array(z.string()).optional(),
    workingDir: z.string().optional(),
    env: z.array(envVar).optional(),
    ports: z.array(containerPort).optional(),
    resources: z
      .strictObject({ requests: resourceList.optional(), limits: resourceList.optional() })
      .default({}),
    livenessProbe: probe.optional(),
    readinessProbe: probe.optional(),
    startupProbe: probe.optional(),
    securityContext: securityContext.optional(),
    volumeMounts: z.array(volumeMount).optional(),
    // Accepted for compatibility with common manifests; bunlet keeps upstream's defaults.
    terminationMessagePath: z.string().optional(),
    terminationMessagePolicy: z.enum(["File", "FallbackToLogsOnError"]).optional(),
    stdin: z.boolean().optional(),
    tty: z.boolean().optional(),
  })
  .transform((c) => ({
    ...c,
    // Upstream SetDefaults_Container: Always for :latest or untagged images, else IfNotPresent.
    imagePullPolicy: c.imagePullPolicy ?? (imageTag(c.image) === "latest" ? "Always" : "IfNotPresent"),
  }));

function imageTag(image: string): string {
  if (image.includes("@")) return "digest";
  const last = image.slice(image.lastIndexOf("/") + 1);
  const i = last.indexOf(":");
  return i < 0 ? "latest" : last.slice(i + 1);
}

const volume = z
  .strictObject({
    name: z.string().regex(DNS_LABEL, "must be a DNS label").max(63),
    emptyDir: z
      .strictObject({ medium: z.enum(["", "Memory"]).default(""), sizeLimit: quantity.optional() })
      .optional(),
    hostPath: z
      .strictObject({
        path: z.string().startsWith("/", "must be an absolute path"),
        type: z
          .enum(["", "DirectoryOrCreate", "Directory", "FileOrCreate", "File", "Socket", "CharDevice", "BlockDevice"])
          .optional(),
      })
      .optional(),
  })
  .superRefine((v, ctx) => {
    if (!!v.emptyDir === !!v.hostPath)
      ctx.addIssue({ code: "custom", message: "must specify exactly one of emptyDir, hostPath (the volume types bunlet supports)" });
  });

const toleration = z.strictObject({
  key: z.string().optional(),
  operator: z.enum(["Exists", "Equal"]).optional(),
  value: z.string().optional(),
  effect: z.enum(["", "NoSchedule", "PreferNoSchedule", "NoExecute"]).optional(),
  tolerationSeconds: z.number().int().optional(),
});

const podSecurityContext = z.strictObject({
  runAsUser: z.number().int().min(0).optional(),
  runAsGroup: z.number().int().min(0).optional(),
  runAsNonRoot: z.boolean().optional(),
  fsGroup: z.number().int().min(0).optional(),
});

const podSpec = z
  .strictObject({
    containers: z.array(container).min(1, "a pod needs at least one container"),
    initContainers: z.array(container).optional(),
    restartPolicy: z.enum(["Always", "OnFailure", "Never"]).default("Always"),
    terminationGracePeriodSeconds: z.number().int().min(0).default(30),
    activeDeadlineSeconds: z.number().int().min(1).optional(),
    hostNetwork: z.boolean().default(false),
    priority: z.number().int().optional(),
    priorityClassName: z.string().optional(),
    nodeName: z.string().optional(),
    volumes: z.array(volume).optional(),
    securityContext: podSecurityContext.optional(),
    tolerations: z.array(toleration).optional(),
    dnsPolicy: z.enum(["ClusterFirst", "ClusterFirstWithHostNet", "Default", "None"]).optional(),
    schedulerName: z.string().optional(),
    enableServiceLinks: z.boolean().optional(),
  })
  .superRefine((spec, ctx) => {
    const names = new Set<string>();
    const all = [
      ...(spec.initContainers ?? []).map((c, i) => ({ c, path: ["initContainers", i] })),
      ...spec.containers.map((c, i) => ({ c, path: ["containers", i] })),
    ];
    const volumes = new Set((spec.volumes ?? []).map((v) => v.name));
    for (const { c, path } of all) {
      if (names.has(c.name)) ctx.addIssue({ code: "custom", path: [...path, "name"], message: `duplicate container name "${c.name}"` });
      names.add(c.name);
      (c.volumeMounts ?? []).forEach((m, j) => {
        if (!volumes.has(m.name))
          ctx.addIssue({ code: "custom", path: [...path, "volumeMounts", j, "name"], message: `volume "${m.name}" not found in spec.volumes` });
      });
    }
    const vnames = new Set<string>();
    (spec.volumes ?? []).forEach((v, i) => {
      if (vnames.has(v.name)) ctx.addIssue({ code: "custom", path: ["volumes", i, "name"], message: `duplicate volume name "${v.name}"` });
      vnames.add(v.name);
    });
  });

const metadata = z.strictObject({
  name: z.string().min(1, "name is required").max(253).regex(DNS_SUBDOMAIN, "must be a DNS subdomain (lowercase alphanumerics, '-' and '.')"),
  namespace: z.string().regex(DNS_LABEL, "must be a DNS label").default(""),
  uid: z.string().default(""),
  labels: z.record(z.string(), z.string()).optional(),
  annotations: z.record(z.string(), z.string()).optional(),
  creationTimestamp: z.string().nullable().optional().transform((v) => v ?? undefined),
  generateName: z.string().optional(),
  // Set by the API server on API pods (src/pod/sources/api.ts keeps these of its metadata).
  deletionTimestamp: z.string().nullable().optional().transform((v) => v ?? undefined),
  deletionGracePeriodSeconds: z.number().int().nullable().optional().transform((v) => v ?? undefined),
  ownerReferences: z.array(z.object({ apiVersion: z.string(), kind: z.string(), name: z.string(), uid: z.string(), controller: z.boolean().optional() }).passthrough()).optional(),
});

export const podSchema = z.strictObject({
  apiVersion: z.literal("v1").default("v1"),
  kind: z.literal("Pod").default("Pod"),
  metadata,
  spec: podSpec,
  // A manifest's status is ignored (upstream applyDefaults resets it to Pending).
  status: z.unknown().optional().transform((): PodStatus | undefined => undefined),
});

export type Pod = z.output<typeof podSchema>;
export type PodSpec = Pod["spec"];
export type Container = PodSpec["containers"][number];
export type Probe = NonNullable<Container["livenessProbe"]>;
export type Volume = NonNullable<PodSpec["volumes"]>[number];

// ---- status (written by bunlet, never parsed from manifests) ----

export type PodPhase = "Pending" | "Running" | "Succeeded" | "Failed" | "Unknown";

export interface ContainerStateWaiting {
  reason?: string;
  message?: string;
}
export interface ContainerStateRunning {
  startedAt?: string;
}
export interface ContainerStateTerminated {
  exitCode: number;
  signal?: number;
  reason?: string;
  message?: string;
  startedAt?: string;
  finishedAt?: string;
  containerID?: string;
}
export interface ContainerStateV1 {
  waiting?: ContainerStateWaiting;
  running?: ContainerStateRunning;
  terminated?: ContainerStateTerminated;
}

export interface ContainerStatus {
  name: string;
  state: ContainerStateV1;
  lastState: ContainerStateV1;
  ready: boolean;
  restartCount: number;
  image: string;
  imageID: string;
  containerID?: string;
  started?: boolean;
}

export interface PodCondition {
  type: "PodScheduled" | "Initialized" | "ContainersReady" | "Ready" | "DisruptionTarget";
  status: "True" | "False" | "Unknown";
  lastProbeTime: string | null;
  lastTransitionTime: string;
  reason?: string;
  message?: string;
}

export interface PodStatus {
  phase: PodPhase;
  conditions?: PodCondition[];
  message?: string;
  reason?: string;
  hostIP?: string;
  podIP?: string;
  podIPs?: { ip: string }[];
  startTime?: string;
  initContainerStatuses?: ContainerStatus[];
  containerStatuses?: ContainerStatus[];
  qosClass?: "Guaranteed" | "Burstable" | "BestEffort";
}

/** Pod name for logs and keys: namespace/name. */
export function podFullName(pod: { metadata: { name: string; namespace: string } }): string {
  return `${pod.metadata.namespace}/${pod.metadata.name}`;
}

// Compile-time guarantee that eviction/QoS code can take our pods as they are.
export const asPodLike = (pod: Pod): PodLike => pod;
