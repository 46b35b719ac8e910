// core/v1 PodSpec: every field a v1.37 API server can store. Defaults are upstream's
// (SetDefaults_PodSpec): restartPolicy Always, terminationGracePeriodSeconds 30, dnsPolicy
// ClusterFirst. The cross-field checks below are upstream's validation of what bunlet acts on
// (validateInitContainers/validateContainers, validateSleepAction, volume mounts and devices).
import { z } from "zod";
import { container, ephemeralContainer, resourceRequirements } from "./container.ts";
import { DNS_SUBDOMAIN, localObjectReference, resourceList } from "./primitives.ts";
import { affinity, evictionResponder, schedulingGate, schedulingGroup, toleration, topologySpreadConstraint } from "./scheduling.ts";
import { podSecurityContext } from "./security-context.ts";
import { defaultOnly, unsupportedValue } from "./unsupported.ts";
import { volume } from "./volume.ts";

const hostAlias = z.strictObject({ ip: z.string(), hostnames: z.array(z.string()).optional() });
const podDnsConfig = z.strictObject({
  nameservers: z.array(z.string()).optional(),
  searches: z.array(z.string()).optional(),
  options: z.array(z.strictObject({ name: z.string(), value: z.string().optional() })).optional(),
});
const podResourceClaim = z.strictObject({
  name: z.string(),
  resourceClaimName: z.string().nullable().optional(),
  resourceClaimTemplateName: z.string().nullable().optional(),
});

const fields = {
  containers: z.array(container).min(1, "a pod needs at least one container"),
  initContainers: z.array(container).optional(),
  ephemeralContainers: z.array(ephemeralContainer).optional(),
  restartPolicy: z.enum(["Always", "OnFailure", "Never"]).default("Always"),
  terminationGracePeriodSeconds: z.number().int().min(0).default(30),
  activeDeadlineSeconds: z.number().int().min(1).optional(),
  hostNetwork: z.boolean().default(false),
  priority: z.number().int().optional(),
  priorityClassName: z.string().optional(),
  // Read by the predicate admit handler (admit-predicate.ts); the rest of scheduling.ts is ignored.
  nodeSelector: z.record(z.string(), z.string()).optional(),
  affinity: affinity.optional(),
  tolerations: z.array(toleration).optional(),
  preemptionPolicy: z.enum(["PreemptLowerPriority", "Never"]).optional(),
  topologySpreadConstraints: z.array(topologySpreadConstraint).optional(),
  schedulingGates: z.array(schedulingGate).optional(),
  schedulingGroup: schedulingGroup.optional(),
  evictionResponders: z.array(evictionResponder).optional(),
  schedulerName: z.string().optional(),
  nodeName: z.string().optional(),
  volumes: z.array(volume).optional(),
  securityContext: podSecurityContext.optional(),
  // Namespaces, names and DNS (src/pod/network).
  hostPID: z.boolean().optional(),
  hostIPC: z.boolean().optional(),
  shareProcessNamespace: z.boolean().optional(),
  hostAliases: z.array(hostAlias).optional(),
  hostname: z.string().optional(),
  subdomain: z.string().optional(),
  setHostnameAsFQDN: z.boolean().optional(),
  // upstream GeneratePodHostNameAndDomain: the pod's hostname, no domain.
  hostnameOverride: z.string().max(64).regex(DNS_SUBDOMAIN, "must be a DNS subdomain (lowercase alphanumerics, '-' and '.')").optional(),
  dnsPolicy: z.enum(["ClusterFirst", "ClusterFirstWithHostNet", "Default", "None"]).default("ClusterFirst"),
  dnsConfig: podDnsConfig.optional(),
  // Service environment variables need a Service informer bunlet does not have: true (the API
  // server's default) and false both inject nothing (docs/pod-spec.md).
  enableServiceLinks: z.boolean().optional(),
  // Service account and registry credentials (API pods; a static pod using them is refused).
  serviceAccountName: z.string().optional(),
  serviceAccount: z.string().optional(), // deprecated alias the API server mirrors
  automountServiceAccountToken: z.boolean().optional(),
  imagePullSecrets: z.array(localObjectReference).optional(),
  // Ready needs each gate's condition True in the pod's API status (readiness-gates.ts).
  readinessGates: z.array(z.strictObject({ conditionType: z.string().min(1) })).optional(),
  // Refused at admission when not the node's OS (admit-predicate.ts, upstream PodOSNotSupported).
  os: z.strictObject({ name: z.enum(["linux", "windows"]) }).optional(),
  // Summed into the pod's requests and limits (pod cgroup, eviction, admission) as upstream PodRequests.
  overhead: resourceList.optional(),
  // The sandbox's CRI runtime handler, from the RuntimeClass of that name (apiobjects/runtime-class-manager.ts).
  runtimeClassName: z.string().optional(),
  // false: the pod's own user namespace (src/pod/userns), where the runtime handler supports it.
  hostUsers: z.boolean().optional(),
  resourceClaims: defaultOnly(z.array(podResourceClaim).optional(), "resource claims (dynamic resource allocation) are not implemented"),
  resources: defaultOnly(resourceRequirements.optional(), "pod-level resources (PodLevelResources) are not implemented; set resources on the containers"),
};

type Container = z.output<typeof container>;
type Path = (string | number)[];

export const podSpec = z.strictObject(fields).superRefine((spec, ctx) => {
  const names = new Set<string>();
  const all = [
    ...(spec.initContainers ?? []).map((c, i) => ({ c, path: ["initContainers", i] as Path })),
    ...spec.containers.map((c, i) => ({ c, path: ["containers", i] as Path })),
  ];
  const volumes = new Set((spec.volumes ?? []).map((v) => v.name));
  const claimVolumes = new Set((spec.volumes ?? []).filter((v) => v.persistentVolumeClaim || v.ephemeral).map((v) => v.name));
  for (const { c, path } of all) {
    checkRestartPolicy(c, path, ctx);
    checkProbeFields(c, path, ctx);
    checkSleepHooks(c, path, spec.terminationGracePeriodSeconds, ctx);
    if (names.has(c.name)) ctx.addIssue({ code: "custom", path: [...path, "name"], message: `duplicate container name "${c.name}"` });
    names.add(c.name);
    checkVolumeMounts(c, path, volumes, ctx);
    checkVolumeDevices(c, path, claimVolumes, ctx);
  }
  const vnames = new Set<string>();
  (spec.volumes ?? []).forEach((v, i) => {
    if (vnames.has(v.name)) ctx.addIssue({ code: "custom", path: ["volumes", i, "name"], message: `duplicate volume name "${v.name}"` });
    vnames.add(v.name);
  });
  if (spec.hostnameOverride !== undefined && (spec.setHostnameAsFQDN || spec.hostNetwork))
    ctx.addIssue({ code: "custom", path: ["hostnameOverride"], message: "may not be set with setHostnameAsFQDN or hostNetwork" });
});

/** Upstream validateSleepAction: 0 is a valid sleep (PodLifecycleSleepActionAllowZero, on by default). */
function checkSleepHooks(c: Container, path: Path, grace: number, ctx: z.RefinementCtx) {
  for (const hook of ["postStart", "preStop"] as const) {
    const secs = c.lifecycle?.[hook]?.sleep?.seconds;
    if (secs !== undefined && (secs < 0 || secs > grace))
      ctx.addIssue({
        code: "custom",
        path: [...path, "lifecycle", hook, "sleep", "seconds"],
        message: `must be non-negative and less than terminationGracePeriodSeconds (${grace})`,
      });
  }
}

function checkVolumeMounts(c: Container, path: Path, volumes: Set<string>, ctx: z.RefinementCtx) {
  (c.volumeMounts ?? []).forEach((m, j) => {
    const at = [...path, "volumeMounts", j];
    if (!volumes.has(m.name)) ctx.addIssue({ code: "custom", path: [...at, "name"], message: `volume "${m.name}" not found in spec.volumes` });
    if (m.subPath && m.subPathExpr) ctx.addIssue({ code: "custom", path: [...at, "subPathExpr"], message: "subPathExpr and subPath are mutually exclusive" });
    if (m.mountPropagation === "Bidirectional" && c.securityContext?.privileged !== true)
      ctx.addIssue({
        code: "custom",
        path: [...at, "mountPropagation"],
        message: "Bidirectional mount propagation is available only to privileged containers",
      });
    if (m.recursiveReadOnly === "IfPossible" && m.readOnly !== true)
      ctx.addIssue({ code: "custom", path: [...at, "recursiveReadOnly"], message: "may only be specified when readOnly is true" });
  });
}

/** Upstream validateVolumeDevices: unique names and paths, a claim's volume only, none also in volumeMounts. */
function checkVolumeDevices(c: Container, path: Path, claimVolumes: Set<string>, ctx: z.RefinementCtx) {
  const names = new Set<string>();
  const paths = new Set<string>();
  const mounts = c.volumeMounts ?? [];
  (c.volumeDevices ?? []).forEach((d, j) => {
    const issue = (field: string, message: string) => ctx.addIssue({ code: "custom", path: [...path, "volumeDevices", j, field], message });
    if (names.has(d.name)) issue("name", "must be unique");
    if (!claimVolumes.has(d.name)) issue("name", "can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode");
    if (d.devicePath === "") issue("devicePath", "Required value");
    if (paths.has(d.devicePath)) issue("devicePath", "must be unique");
    if (d.devicePath.split("/").includes("..")) issue("devicePath", "can not contain backsteps ('..')");
    if (mounts.some((m) => m.name === d.name)) issue("name", "must not already exist in volumeMounts");
    if (mounts.some((m) => m.mountPath === d.devicePath)) issue("devicePath", "must not already exist as a path in volumeMounts");
    names.add(d.name);
    paths.add(d.devicePath);
  });
}

/** Upstream validateLivenessProbe/validateStartupProbe/validateReadinessProbe. */
function checkProbeFields(c: Container, path: Path, ctx: z.RefinementCtx) {
  for (const f of ["livenessProbe", "startupProbe"] as const)
    if (c[f] && c[f].successThreshold !== 1) ctx.addIssue({ code: "custom", path: [...path, f, "successThreshold"], message: "must be 1" });
  if (c.readinessProbe?.terminationGracePeriodSeconds !== undefined)
    ctx.addIssue({ code: "custom", path: [...path, "readinessProbe", "terminationGracePeriodSeconds"], message: "must not be set for readinessProbes" });
}

/**
 * A container's restartPolicy: `Always` on an init container makes a sidecar (upstream
 * validateInitContainers). Any other per-container policy is ContainerRestartRules, which bunlet does
 * not implement (the pod's restartPolicy decides). A regular init container takes no probes or hooks.
 */
function checkRestartPolicy(c: Container, path: Path, ctx: z.RefinementCtx) {
  const isInit = path[0] === "initContainers";
  if (c.restartPolicy !== undefined && !(isInit && c.restartPolicy === "Always"))
    ctx.addIssue({
      code: "custom",
      path: [...path, "restartPolicy"],
      message: unsupportedValue(
        c.restartPolicy,
        "per-container restart policies (ContainerRestartRules) are not implemented; only Always on an init container (a sidecar)",
      ),
    });
  if (!isInit || c.restartPolicy === "Always") return;
  for (const f of ["lifecycle", "livenessProbe", "readinessProbe", "startupProbe"] as const)
    if (c[f] !== undefined) ctx.addIssue({ code: "custom", path: [...path, f], message: "may not be set for init containers without restartPolicy=Always" });
}
