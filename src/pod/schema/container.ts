// core/v1 Container (and EphemeralContainer): probes, lifecycle hooks, environment, ports, mounts and
// resources. Defaults are upstream's (SetDefaults_Container/Probe/HTTPGetAction): probe periodSeconds
// 10 / timeoutSeconds 1 / successThreshold 1 / failureThreshold 3, httpGet path "/" and scheme HTTP,
// imagePullPolicy from the image tag. Fields bunlet cannot act on accept their default value only
// (unsupported.ts).
import { z } from "zod";
import { ENV_FIELD_PATHS } from "../volumes/downward-api.ts";
import { DNS_LABEL, fieldRef, intOrString, port, relativePath, resourceFieldRef, resourceList } from "./primitives.ts";
import { securityContext } from "./security-context.ts";
import { defaultOnly, refusedWhenSet } from "./unsupported.ts";

const execAction = z.strictObject({ command: z.array(z.string()).min(1) });
const httpGetAction = z.strictObject({
  path: z.string().default("/"),
  port: intOrString,
  host: z.string().optional(),
  scheme: z.enum(["HTTP", "HTTPS"]).default("HTTP"),
  httpHeaders: z.array(z.strictObject({ name: z.string().min(1), value: z.string() })).optional(),
  // HTTP1 is what the server defaults it to when the H2CContainerProbe gate is on.
  protocol: defaultOnly(
    z.enum(["HTTP1", "HTTP2"]).optional(),
    "HTTP/2 cleartext probes and hooks (H2CContainerProbe) are not implemented",
    (v) => v !== "HTTP2",
  ),
});
const tcpSocketAction = z.strictObject({ port: intOrString, host: z.string().optional() });
const grpcAction = z.strictObject({
  port,
  // `service` has no omitempty upstream: the API server writes null when it is unset.
  service: z
    .string()
    .nullable()
    .optional()
    .transform((v) => v ?? undefined),
  mode: defaultOnly(z.enum(["Plaintext", "TLS"]).optional(), "gRPC probes over TLS (GRPCContainerProbeTLS) are not implemented", (v) => v !== "TLS"),
});

const probe = z
  .strictObject({
    exec: execAction.optional(),
    httpGet: httpGetAction.optional(),
    tcpSocket: tcpSocketAction.optional(),
    grpc: grpcAction.optional(),
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
      ctx.addIssue({
        code: "custom",
        path: ["tcpSocket"],
        message: "tcpSocket is not supported as a lifecycle handler (upstream never runs it); use exec, httpGet or sleep",
      });
    const n = [h.exec, h.httpGet, h.sleep].filter(Boolean).length;
    if (n !== 1) ctx.addIssue({ code: "custom", message: "must specify exactly one of exec, httpGet, sleep" });
  });
const containerLifecycle = z.strictObject({
  postStart: lifecycleHandler.optional(),
  preStop: lifecycleHandler.optional(),
  // ContainerStopSignals: the kubelet passes it to the CRI's StopContainer config, which bunlet's CRI
  // client does not carry; the image's STOPSIGNAL (or SIGTERM) is what stops the container.
  stopSignal: refusedWhenSet("a container stop signal (ContainerStopSignals) is not implemented; the image's STOPSIGNAL or SIGTERM stops the container"),
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
const envVarSource = z
  .strictObject({
    fieldRef: fieldRef(ENV_FIELD_PATHS).optional(),
    resourceFieldRef: resourceFieldRef.optional(),
    secretKeyRef: objectKeyRef.optional(),
    configMapKeyRef: objectKeyRef.optional(),
    fileKeyRef: refusedWhenSet("environment variables from files (EnvFiles) are not implemented"),
  })
  .superRefine((v, ctx) => {
    if ([v.fieldRef, v.resourceFieldRef, v.secretKeyRef, v.configMapKeyRef, v.fileKeyRef].filter(Boolean).length !== 1)
      ctx.addIssue({ code: "custom", message: "must specify exactly one of fieldRef, resourceFieldRef, secretKeyRef, configMapKeyRef" });
  });
const envVar = z.strictObject({ name: z.string().min(1), value: z.string().default(""), valueFrom: envVarSource.optional() }).superRefine((e, ctx) => {
  if (e.valueFrom && e.value !== "") ctx.addIssue({ code: "custom", path: ["valueFrom"], message: "may not be specified when `value` is not empty" });
});

const containerPort = z.strictObject({
  name: z.string().regex(DNS_LABEL).max(15).optional(),
  containerPort: port,
  hostPort: port.optional(),
  hostIP: z.string().optional(),
  protocol: z.enum(["TCP", "UDP", "SCTP"]).default("TCP"),
});

const volumeMount = z.strictObject({
  name: z.string().min(1),
  mountPath: z.string().startsWith("/", "must be an absolute path"),
  readOnly: z.boolean().optional(),
  // IfPossible is honoured as the runtime lacking recursive read-only support (a plain read-only
  // mount, which upstream validation requires with it); Enabled needs the CRI's recursive_read_only.
  recursiveReadOnly: defaultOnly(
    z.enum(["Disabled", "IfPossible", "Enabled"]).optional(),
    "recursive read-only mounts are not implemented (IfPossible gives a plain read-only mount)",
    (v) => v !== "Enabled",
  ),
  subPath: relativePath.optional(),
  subPathExpr: z.string().optional(),
  mountPropagation: z.enum(["None", "HostToContainer", "Bidirectional"]).optional(),
  bindMountOptions: defaultOnly(z.array(z.enum(["noexec", "nodev", "nosuid"])).optional(), "bind mount options (VolumeBindMountOptions) are not implemented"),
});

export const resourceRequirements = z.strictObject({
  requests: resourceList.optional(),
  limits: resourceList.optional(),
  claims: defaultOnly(
    z.array(z.strictObject({ name: z.string(), request: z.string().optional() })).optional(),
    "resource claims (dynamic resource allocation) are not implemented",
  ),
});

const restartRule = z.strictObject({
  action: z.enum(["Restart", "RestartAllContainers"]),
  exitCodes: z.strictObject({ operator: z.enum(["In", "NotIn"]), values: z.array(z.number().int()).optional() }).optional(),
});

/** The fields of Container and EphemeralContainer (upstream EphemeralContainerCommon). */
const containerFields = {
  name: z.string().regex(DNS_LABEL, "must be a DNS label (lowercase alphanumerics and '-')").max(63),
  image: z.string().min(1),
  imagePullPolicy: z.enum(["Always", "IfNotPresent", "Never"]).optional(),
  command: z.array(z.string()).optional(),
  args: z.array(z.string()).optional(),
  workingDir: z.string().optional(),
  env: z.array(envVar).optional(),
  envFrom: z.array(envFromSource).optional(),
  ports: z.array(containerPort).optional(),
  resources: resourceRequirements.default({}),
  // Read by in-place resize only (allocation/handlers.go), which bunlet does not do.
  resizePolicy: z.array(z.strictObject({ resourceName: z.string(), restartPolicy: z.enum(["NotRequired", "RestartContainer"]) })).optional(),
  livenessProbe: probe.optional(),
  readinessProbe: probe.optional(),
  startupProbe: probe.optional(),
  securityContext: securityContext.optional(),
  volumeMounts: z.array(volumeMount).optional(),
  volumeDevices: z.array(z.strictObject({ name: z.string(), devicePath: z.string() })).optional(),
  lifecycle: containerLifecycle.optional(),
  // Init containers: `Always` makes a sidecar (checked in pod-spec.ts). Any other per-container
  // policy and restartPolicyRules (ContainerRestartRules) are refused there and here.
  restartPolicy: z.enum(["Always", "OnFailure", "Never"]).optional(),
  restartPolicyRules: defaultOnly(z.array(restartRule).optional(), "container restart rules (ContainerRestartRules) are not implemented"),
  terminationMessagePath: z.string().optional(),
  terminationMessagePolicy: z.enum(["File", "FallbackToLogsOnError"]).optional(),
  // Passed to the CRI's container config as upstream's generateContainerConfig does.
  stdin: z.boolean().optional(),
  stdinOnce: z.boolean().optional(),
  tty: z.boolean().optional(),
};

/** Upstream SetDefaults_Container: Always for :latest or untagged images, else IfNotPresent. */
function defaultPullPolicy<C extends { image: string; imagePullPolicy?: "Always" | "IfNotPresent" | "Never" }>(c: C) {
  return { ...c, imagePullPolicy: c.imagePullPolicy ?? (imageTag(c.image) === "latest" ? ("Always" as const) : ("IfNotPresent" as const)) };
}

export const container = z.strictObject(containerFields).transform(defaultPullPolicy);

/**
 * core/v1 EphemeralContainer. Only the pods/ephemeralcontainers subresource adds them (kubectl debug)
 * to a running pod, which starts them once each (kuberuntime/compute-actions.ts); a static pod with
 * them is refused (validation/index.ts).
 */
export const ephemeralContainer = z.strictObject({ ...containerFields, targetContainerName: z.string().optional() }).transform(defaultPullPolicy);

function imageTag(image: string): string {
  if (image.includes("@")) return "digest";
  const last = image.slice(image.lastIndexOf("/") + 1);
  const i = last.indexOf(":");
  return i < 0 ? "latest" : last.slice(i + 1);
}
