// The v1 Pod subset bunlet runs, as a zod schema (field names exactly as upstream core/v1). Anything
// outside the subset is rejected with the field path rather than silently ignored: a static pod that
// asks for something bunlet cannot do must not run half-configured. Defaults are upstream's
// (SetDefaults_Pod/Container/Probe): restartPolicy Always, terminationGracePeriodSeconds 30,
// probe periodSeconds 10 / timeoutSeconds 1 / successThreshold 1 / failureThreshold 3.
import { z } from "zod";
import { parseQuantity } from "../config/quantity.ts";
import type { PodLike } from "./pod-like.ts";
import { podUidError } from "./pod-dir.ts";
import { ENV_FIELD_PATHS, VOLUME_FIELD_PATHS, isSupportedFieldPath } from "./volumes/downward-api.ts";

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
    grpc: z.strictObject({ port, service: z.string().optional() }).optional(), // lifecycle
    initialDelaySeconds: z.number().int().min(0).default(0),
    periodSeconds: z.number().int().min(1).default(10),
    timeoutSeconds: z.number().int().min(1).default(1),
    successThreshold: z.number().int().min(1).default(1),
    failureThreshold: z.number().int().min(1).default(3),
    terminationGracePeriodSeconds: z.number().int().min(1).optional(),
  })
  .superRefine((p, ctx) => {
    const n = [p.exec, p.httpGet, p.tcpSocket, p.grpc].filter(Boolean).length;
    if (n !== 1) ctx.addIssue({ code: "custom", message: "must specify exactly one of exec, httpGet, tcpSocket, grpc" });
  });

// Container lifecycle hooks (core/v1 LifecycleHandler): exactly one of exec, httpGet, sleep. tcpSocket
// is refused: upstream keeps it only for backward compatibility and never runs it (the hook fails).
const lifecycleHandler = z
  .strictObject({
    exec: execAction.optional(),
    httpGet: httpGetAction.optional(),
    sleep: z.strictObject({ seconds: z.number().int() }).optional(),
    tcpSocket: z.unknown().optional(),
  })
  .superRefine((h, ctx) => {
    if (h.tcpSocket !== undefined)
      ctx.addIssue({ code: "custom", path: ["tcpSocket"], message: "tcpSocket is not supported as a lifecycle handler (upstream never runs it); use exec, httpGet or sleep" });
    const n = [h.exec, h.httpGet, h.sleep].filter(Boolean).length;
    if (n !== 1) ctx.addIssue({ code: "custom", message: "must specify exactly one of exec, httpGet, sleep" });
  });
const containerLifecycle = z.strictObject({ postStart: lifecycleHandler.optional(), preStop: lifecycleHandler.optional() });

// Downward API references (env valueFrom, downwardAPI volume items). // lifecycle
const fieldRef = (allowed: readonly string[]) =>
  z.strictObject({ fieldPath: z.string(), apiVersion: z.literal("v1").optional() }).superRefine((f, ctx) => {
    if (!isSupportedFieldPath(f.fieldPath, allowed))
      ctx.addIssue({ code: "custom", path: ["fieldPath"], message: `Unsupported value: "${f.fieldPath}": supported values: ${allowed.map((a) => `"${a}"`).join(", ")} and subscripted metadata.labels['…'], metadata.annotations['…']` });
  });
const resourceFieldRef = z.strictObject({
  containerName: z.string().optional(),
  resource: z.string().regex(/^(limits|requests)\.(cpu|memory|ephemeral-storage|hugepages-.+)$/, "must be limits.* or requests.* of cpu, memory, ephemeral-storage or hugepages-*"),
  divisor: quantity.optional(),
});
// References to API objects (secrets, configMaps): resolved through the API server for API pods;
// a static pod that uses them is refused when decoded (manifest.ts staticPodApiReference).
const objectKeyRef = z.strictObject({ name: z.string().default(""), key: z.string().min(1), optional: z.boolean().optional() });
const envFromSource = z
  .strictObject({
    prefix: z.string().optional(),
    configMapRef: z.strictObject({ name: z.string().default(""), optional: z.boolean().optional() }).optional(),
    secretRef: z.strictObject({ name: z.string().default(""), optional: z.boolean().optional() }).optional(),
  })
  .superRefine((e, ctx) => {
    if (!!e.configMapRef === !!e.secretRef) ctx.addIssue({ code: "custom", message: "must specify exactly one of configMapRef, secretRef" });
  });
const envVar = z
  .strictObject({
    name: z.string().min(1),
    value: z.string().default(""),
    valueFrom: z
      .strictObject({
        fieldRef: fieldRef(ENV_FIELD_PATHS).optional(),
        resourceFieldRef: resourceFieldRef.optional(),
        secretKeyRef: objectKeyRef.optional(),
        configMapKeyRef: objectKeyRef.optional(),
      })
      .superRefine((v, ctx) => {
        if ([v.fieldRef, v.resourceFieldRef, v.secretKeyRef, v.configMapKeyRef].filter(Boolean).length !== 1)
          ctx.addIssue({ code: "custom", message: "must specify exactly one of fieldRef, resourceFieldRef, secretKeyRef, configMapKeyRef" });
      })
      .optional(),
  })
  .superRefine((e, ctx) => {
    if (e.valueFrom && e.value !== "") ctx.addIssue({ code: "custom", path: ["valueFrom"], message: "may not be specified when `value` is not empty" });
  });

/** upstream validateLocalDescendingPath. */
const relativePath = z.string().superRefine((p, ctx) => {
  if (p.startsWith("/")) ctx.addIssue({ code: "custom", message: "must be a relative path" });
  if (p.split("/").includes("..")) ctx.addIssue({ code: "custom", message: "must not contain '..'" });
});
const downwardApiItem = z
  .strictObject({
    // upstream validateLocalNonReservedPath: ..data and friends belong to the atomic writer.
    path: relativePath.pipe(z.string().min(1).refine((p) => !p.startsWith(".."), "must not start with '..'")),
    fieldRef: fieldRef(VOLUME_FIELD_PATHS).optional(),
    resourceFieldRef: resourceFieldRef.optional(),
    mode: z.number().int().min(0).max(0o777).optional(),
  })
  .superRefine((it, ctx) => {
    if (!!it.fieldRef === !!it.resourceFieldRef) ctx.addIssue({ code: "custom", message: "must specify exactly one of fieldRef, resourceFieldRef" });
    if (it.resourceFieldRef && !it.resourceFieldRef.containerName) ctx.addIssue({ code: "custom", path: ["resourceFieldRef", "containerName"], message: "required field is missing" });
  });
const fileMode = z.number().int().min(0).max(0o777);
const downwardApiVolume = z.strictObject({ items: z.array(downwardApiItem).optional(), defaultMode: fileMode.optional() });
/** core/v1 KeyToPath (secret/configMap items). */
const keyToPath = z.strictObject({
  key: z.string().min(1),
  path: relativePath.pipe(z.string().min(1).refine((p) => !p.startsWith(".."), "must not start with '..'")),
  mode: fileMode.optional(),
});
const secretVolume = z.strictObject({ secretName: z.string().min(1), items: z.array(keyToPath).optional(), defaultMode: fileMode.optional(), optional: z.boolean().optional() });
const configMapVolume = z.strictObject({ name: z.string().default(""), items: z.array(keyToPath).optional(), defaultMode: fileMode.optional(), optional: z.boolean().optional() });
const projectedObject = z.strictObject({ name: z.string().default(""), items: z.array(keyToPath).optional(), optional: z.boolean().optional() });
// core/v1 ClusterTrustBundleProjection, with upstream's validation (validateProjectionSources): one of
// name or signerName; labelSelector only with signerName (none there matches nothing).
const labelSelector = z.strictObject({
  matchLabels: z.record(z.string(), z.string()).optional(),
  matchExpressions: z.array(z.strictObject({ key: z.string().min(1), operator: z.enum(["In", "NotIn", "Exists", "DoesNotExist"]), values: z.array(z.string()).optional() })).optional(),
});
const clusterTrustBundleProjection = z
  .strictObject({
    name: z.string().optional(),
    signerName: z.string().optional(),
    labelSelector: labelSelector.optional(),
    optional: z.boolean().optional(),
    path: relativePath.pipe(z.string().min(1).refine((p) => !p.startsWith(".."), "must not start with '..'")),
  })
  .superRefine((c, ctx) => {
    if (c.name !== undefined && c.signerName !== undefined) ctx.addIssue({ code: "custom", message: "only one of name and signerName may be used" });
    else if (c.name !== undefined) {
      if (c.name === "") ctx.addIssue({ code: "custom", path: ["name"], message: "Required value: must be a valid object name" });
      if (c.labelSelector) ctx.addIssue({ code: "custom", path: ["labelSelector"], message: "labelSelector must be unset if name is specified" });
    } else if (c.signerName !== undefined) {
      if (c.signerName === "") ctx.addIssue({ code: "custom", path: ["signerName"], message: "Required value: must be a valid signer name" });
    } else ctx.addIssue({ code: "custom", message: "Required value: either name or signerName must be specified" });
  });
const projectedVolume = z.strictObject({
  sources: z.array(
    z
      .strictObject({
        downwardAPI: z.strictObject({ items: z.array(downwardApiItem).optional() }).optional(),
        secret: projectedObject.optional(),
        configMap: projectedObject.optional(),
        // upstream validation: expirationSeconds ≥ 10 min and < 2^32; audience optional.
        serviceAccountToken: z
          .strictObject({ audience: z.string().optional(), expirationSeconds: z.number().int().min(600, "may not specify a duration less than 10 minutes").max(2 ** 32 - 1).default(3600), path: relativePath.pipe(z.string().min(1)) })
          .optional(),
        clusterTrustBundle: clusterTrustBundleProjection.optional(),
      })
      .superRefine((src, ctx) => {
        if ([src.downwardAPI, src.secret, src.configMap, src.serviceAccountToken, src.clusterTrustBundle].filter(Boolean).length > 1)
          ctx.addIssue({ code: "custom", message: "may not specify more than 1 volume type per source" });
      }),
  ),
  defaultMode: fileMode.optional(),
});

const containerPort = z.strictObject({
  name: z.string().regex(DNS_LABEL).max(15).optional(),
  containerPort: port,
  hostPort: port.optional(),
  hostIP: z.string().optional(),
  protocol: z.enum(["TCP", "UDP", "SCTP"]).default("TCP"),
});

// Security fields (core/v1 SecurityContext / PodSecurityContext), acted on as the kubelet does
// (src/pod/security): the semantic checks with upstream's messages are in validation/security.ts.
const MAX_INT32 = 2147483647;
const id32 = z.number().int().min(0, "must be between 0 and 2147483647, inclusive").max(MAX_INT32, "must be between 0 and 2147483647, inclusive");
const profileType = z.enum(["RuntimeDefault", "Unconfined", "Localhost"]);
const seccompProfile = z.strictObject({ type: profileType, localhostProfile: z.string().optional() });
const appArmorProfile = z.strictObject({ type: profileType, localhostProfile: z.string().optional() });
const seLinuxOptions = z.strictObject({ user: z.string().optional(), role: z.string().optional(), type: z.string().optional(), level: z.string().optional() });

const securityContext = z.strictObject({
  runAsUser: id32.optional(),
  runAsGroup: id32.optional(),
  runAsNonRoot: z.boolean().optional(),
  privileged: z.boolean().optional(),
  readOnlyRootFilesystem: z.boolean().optional(),
  allowPrivilegeEscalation: z.boolean().optional(),
  capabilities: z.strictObject({ add: z.array(z.string()).optional(), drop: z.array(z.string()).optional() }).optional(),
  seccompProfile: seccompProfile.optional(),
  appArmorProfile: appArmorProfile.optional(),
  seLinuxOptions: seLinuxOptions.optional(),
  procMount: z.enum(["Default", "Unmasked"]).optional(),
});

const volumeMount = z.strictObject({
  name: z.string().min(1),
  mountPath: z.string().startsWith("/", "must be an absolute path"),
  readOnly: z.boolean().optional(),
  subPath: relativePath.optional(),
  subPathExpr: z.string().optional(),
  mountPropagation: z.enum(["None", "HostToContainer", "Bidirectional"]).optional(),
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
    envFrom: z.array(envFromSource).optional(),
    ports: z.array(containerPort).optional(),
    resources: z
      .strictObject({ requests: resourceList.optional(), limits: resourceList.optional() })
      .default({}),
    livenessProbe: probe.optional(),
    readinessProbe: probe.optional(),
    startupProbe: probe.optional(),
    securityContext: securityContext.optional(),
    volumeMounts: z.array(volumeMount).optional(),
    lifecycle: containerLifecycle.optional(), // lifecycle
    // Sidecar containers: only `Always`, only on init containers (checked in podSpec). // lifecycle
    restartPolicy: z.literal("Always").optional(),
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
        path: z
          .string()
          .startsWith("/", "must be an absolute path")
          .refine((p) => !p.split("/").includes(".."), "must not contain '..'"), // lifecycle: upstream validatePathNoBacksteps
        type: z
          .enum(["", "DirectoryOrCreate", "Directory", "FileOrCreate", "File", "Socket", "CharDevice", "BlockDevice"])
          .optional(),
      })
      .optional(),
    downwardAPI: downwardApiVolume.optional(),
    projected: projectedVolume.optional(),
    secret: secretVolume.optional(),
    configMap: configMapVolume.optional(),
  })
  .superRefine((v, ctx) => {
    if ([v.emptyDir, v.hostPath, v.downwardAPI, v.projected, v.secret, v.configMap].filter((x) => x !== undefined).length !== 1)
      ctx.addIssue({ code: "custom", message: "must specify exactly one of emptyDir, hostPath, downwardAPI, projected, secret, configMap (the volume types bunlet supports)" });
  });

const toleration = z.strictObject({
  key: z.string().optional(),
  operator: z.enum(["Exists", "Equal"]).optional(),
  value: z.string().optional(),
  effect: z.enum(["", "NoSchedule", "PreferNoSchedule", "NoExecute"]).optional(),
  tolerationSeconds: z.number().int().optional(),
});

const nodeSelectorRequirement = z.strictObject({
  key: z.string(),
  operator: z.enum(["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]),
  values: z.array(z.string()).optional(),
});
const nodeSelectorSchema = z.strictObject({
  nodeSelectorTerms: z.array(z.strictObject({ matchExpressions: z.array(nodeSelectorRequirement).optional(), matchFields: z.array(nodeSelectorRequirement).optional() })),
});

const podSecurityContext = z.strictObject({
  runAsUser: id32.optional(),
  runAsGroup: id32.optional(),
  runAsNonRoot: z.boolean().optional(),
  fsGroup: id32.optional(),
  fsGroupChangePolicy: z.enum(["OnRootMismatch", "Always"]).optional(),
  supplementalGroups: z.array(id32).optional(),
  sysctls: z.array(z.strictObject({ name: z.string(), value: z.string() })).optional(),
  seccompProfile: seccompProfile.optional(),
  appArmorProfile: appArmorProfile.optional(),
  seLinuxOptions: seLinuxOptions.optional(),
});

const hostAlias = z.strictObject({ ip: z.string(), hostnames: z.array(z.string()).optional() });
const podDnsConfig = z.strictObject({
  nameservers: z.array(z.string()).optional(),
  searches: z.array(z.string()).optional(),
  options: z.array(z.strictObject({ name: z.string(), value: z.string().optional() })).optional(),
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
    // Read by the predicate admit handler (admit-predicate.ts); pod (anti-)affinity is the scheduler's.
    nodeSelector: z.record(z.string(), z.string()).optional(),
    affinity: z.looseObject({ nodeAffinity: z.looseObject({ requiredDuringSchedulingIgnoredDuringExecution: nodeSelectorSchema.optional() }).optional() }).optional(),
    nodeName: z.string().optional(),
    volumes: z.array(volume).optional(),
    securityContext: podSecurityContext.optional(),
    tolerations: z.array(toleration).optional(),
    // Namespaces, names and DNS (src/pod/network): upstream defaults dnsPolicy to ClusterFirst.
    hostPID: z.boolean().optional(),
    hostIPC: z.boolean().optional(),
    shareProcessNamespace: z.boolean().optional(),
    hostAliases: z.array(hostAlias).optional(),
    hostname: z.string().optional(),
    subdomain: z.string().optional(),
    setHostnameAsFQDN: z.boolean().optional(),
    dnsPolicy: z.enum(["ClusterFirst", "ClusterFirstWithHostNet", "Default", "None"]).default("ClusterFirst"),
    dnsConfig: podDnsConfig.optional(),
    schedulerName: z.string().optional(),
    // Accepted, acted on as upstream would without an API server: there are no Services whose
    // *_SERVICE_HOST/_PORT variables could be injected, so true and false both inject nothing. // lifecycle
    enableServiceLinks: z.boolean().optional(),
    // Service account and registry credentials (API pods; a static pod using them is refused).
    serviceAccountName: z.string().optional(),
    serviceAccount: z.string().optional(), // deprecated alias the API server mirrors
    automountServiceAccountToken: z.boolean().optional(),
    imagePullSecrets: z.array(z.strictObject({ name: z.string().default("") })).optional(),
  })
  .superRefine((spec, ctx) => {
    const names = new Set<string>();
    const all = [
      ...(spec.initContainers ?? []).map((c, i) => ({ c, path: ["initContainers", i] })),
      ...spec.containers.map((c, i) => ({ c, path: ["containers", i] })),
    ];
    const volumes = new Set((spec.volumes ?? []).map((v) => v.name));
    for (const { c, path } of all) {
      checkSidecarFields(c, path, ctx);
      checkProbeFields(c, path, ctx);
      for (const hook of ["postStart", "preStop"] as const) {
        const secs = c.lifecycle?.[hook]?.sleep?.seconds;
        // Upstream validateSleepAction.
        if (secs !== undefined && (secs <= 0 || secs > spec.terminationGracePeriodSeconds))
          ctx.addIssue({ code: "custom", path: [...path, "lifecycle", hook, "sleep", "seconds"], message: `must be greater than 0 and less than terminationGracePeriodSeconds (${spec.terminationGracePeriodSeconds})` });
      }
      if (names.has(c.name)) ctx.addIssue({ code: "custom", path: [...path, "name"], message: `duplicate container name "${c.name}"` });
      names.add(c.name);
      (c.volumeMounts ?? []).forEach((m, j) => {
        if (!volumes.has(m.name))
          ctx.addIssue({ code: "custom", path: [...path, "volumeMounts", j, "name"], message: `volume "${m.name}" not found in spec.volumes` });
        if (m.subPath && m.subPathExpr)
          ctx.addIssue({ code: "custom", path: [...path, "volumeMounts", j, "subPathExpr"], message: "subPathExpr and subPath are mutually exclusive" });
        if (m.mountPropagation === "Bidirectional" && c.securityContext?.privileged !== true)
          ctx.addIssue({ code: "custom", path: [...path, "volumeMounts", j, "mountPropagation"], message: "Bidirectional mount propagation is available only to privileged containers" });
      });
    }
    const vnames = new Set<string>();
    (spec.volumes ?? []).forEach((v, i) => {
      if (vnames.has(v.name)) ctx.addIssue({ code: "custom", path: ["volumes", i, "name"], message: `duplicate volume name "${v.name}"` });
      vnames.add(v.name);
    });
  });

/** Upstream validateLivenessProbe/validateStartupProbe/validateReadinessProbe. */
function checkProbeFields(c: z.output<typeof container>, path: (string | number)[], ctx: z.RefinementCtx) {
  for (const f of ["livenessProbe", "startupProbe"] as const)
    if (c[f] && c[f].successThreshold !== 1) ctx.addIssue({ code: "custom", path: [...path, f, "successThreshold"], message: "must be 1" });
  if (c.readinessProbe?.terminationGracePeriodSeconds !== undefined)
    ctx.addIssue({ code: "custom", path: [...path, "readinessProbe", "terminationGracePeriodSeconds"], message: "must not be set for readinessProbes" });
}

/** Upstream validateInitContainers / validateContainers: restartPolicy, probes and hooks per container kind. */
function checkSidecarFields(c: z.output<typeof container>, path: (string | number)[], ctx: z.RefinementCtx) {
  const isInit = path[0] === "initContainers";
  if (!isInit && c.restartPolicy !== undefined) ctx.addIssue({ code: "custom", path: [...path, "restartPolicy"], message: "may not be set for non-init containers" });
  if (!isInit || c.restartPolicy === "Always") return;
  for (const f of ["lifecycle", "livenessProbe", "readinessProbe", "startupProbe"] as const)
    if (c[f] !== undefined) ctx.addIssue({ code: "custom", path: [...path, f], message: "may not be set for init containers without restartPolicy=Always" });
}

const metadata = z.strictObject({
  name: z.string().min(1, "name is required").max(253).regex(DNS_SUBDOMAIN, "must be a DNS subdomain (lowercase alphanumerics, '-' and '.')"),
  namespace: z.string().regex(DNS_LABEL, "must be a DNS label").default(""),
  // Empty: a static pod gets one from its content (static-pod.ts); otherwise it names a directory.
  uid: z
    .string()
    .default("")
    .refine((u) => u === "" || podUidError(u) === undefined, { error: (i) => podUidError(String(i.input)) ?? "invalid pod UID" }),
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
export type LifecycleHandler = NonNullable<NonNullable<Container["lifecycle"]>["postStart"]>;
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
