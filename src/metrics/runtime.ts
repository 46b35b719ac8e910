// CRI operation metrics (upstream kuberuntime/instrumented_services.go): every call the kubelet makes
// to the runtime counts in kubelet_runtime_operations_total{operation_type}, its duration in
// kubelet_runtime_operations_duration_seconds and its failure in kubelet_runtime_operations_errors_total,
// with upstream's operation_type names. RunPodSandbox also feeds kubelet_started_pods_total (+ errors)
// and kubelet_run_podsandbox_duration_seconds{runtime_handler}; StartContainer feeds
// kubelet_started_containers_total{container_type} (+ errors{container_type,code}).
// A decorator over the CriClient, so the client itself stays free of metrics.
import type { ContainerConfig, CriClient } from "../cri/client.ts";
import { GrpcError } from "../cri/grpc.ts";
import { DEFAULT_BUCKETS, type Registry } from "../server/metrics.ts";
import { RUNTIME_OPERATION_BUCKETS } from "./buckets.ts";

/** CriClient method → upstream operation_type. Methods not listed (close, endpoint) pass through. */
export const CRI_OPERATION_TYPES: Partial<Record<keyof CriClient, string>> = {
  version: "version",
  status: "status",
  runPodSandbox: "run_podsandbox",
  stopPodSandbox: "stop_podsandbox",
  removePodSandbox: "remove_podsandbox",
  podSandboxStatus: "podsandbox_status",
  listPodSandbox: "list_podsandbox",
  createContainer: "create_container",
  startContainer: "start_container",
  stopContainer: "stop_container",
  removeContainer: "remove_container",
  listContainers: "list_containers",
  containerStatus: "container_status",
  containerStats: "container_stats",
  listContainerStats: "list_container_stats",
  reopenContainerLog: "reopen_container_log",
  execSync: "exec_sync",
  exec: "exec",
  attach: "attach",
  portForward: "port_forward",
  listImages: "list_images",
  imageStatus: "image_status",
  imageStatusInfo: "image_status",
  pullImage: "pull_image",
  removeImage: "remove_image",
  imageFsInfo: "image_fs_info",
};

/** Container types of kubelet_started_containers_total, as upstream labels them. */
export type ContainerType = "container" | "init_container" | "ephemeral_container";

export interface RuntimeMetricsOptions {
  /** Which kind of container a CreateContainer creates (default "container"). */
  containerType?: (config: ContainerConfig) => ContainerType;
}

function runtimeFamilies(registry: Registry) {
  const labelNames = ["operation_type"];
  return {
    ops: registry.counter({ name: "kubelet_runtime_operations_total", help: "Cumulative number of runtime operations by operation type.", labelNames }),
    errors: registry.counter({
      name: "kubelet_runtime_operations_errors_total",
      help: "Cumulative number of runtime operation errors by operation type.",
      labelNames,
    }),
    duration: registry.histogram({
      name: "kubelet_runtime_operations_duration_seconds",
      help: "Duration in seconds of runtime operations. Broken down by operation type.",
      labelNames,
      buckets: RUNTIME_OPERATION_BUCKETS,
    }),
    sandboxDuration: registry.histogram({
      name: "kubelet_run_podsandbox_duration_seconds",
      help: "Duration in seconds of the run_podsandbox operations. Broken down by RuntimeClass.Handler.",
      labelNames: ["runtime_handler"],
      buckets: DEFAULT_BUCKETS,
    }),
    sandboxErrors: registry.counter({
      name: "kubelet_run_podsandbox_errors_total",
      help: "Cumulative number of the run_podsandbox operation errors by RuntimeClass.Handler.",
      labelNames: ["runtime_handler"],
    }),
    startedPods: registry.counter({ name: "kubelet_started_pods_total", help: "Cumulative number of pods started" }),
    startedPodsErrors: registry.counter({ name: "kubelet_started_pods_errors_total", help: "Cumulative number of errors when starting pods" }),
    startedContainers: registry.counter({
      name: "kubelet_started_containers_total",
      help: "Cumulative number of containers started",
      labelNames: ["container_type"],
    }),
    startedContainersErrors: registry.counter({
      name: "kubelet_started_containers_errors_total",
      help: "Cumulative number of errors when starting containers",
      labelNames: ["container_type", "code"],
    }),
  };
}

// Go's codes.Code String() names, by number.
const GRPC_CODE_NAMES = [
  "OK",
  "Canceled",
  "Unknown",
  "InvalidArgument",
  "DeadlineExceeded",
  "NotFound",
  "AlreadyExists",
  "PermissionDenied",
  "ResourceExhausted",
  "FailedPrecondition",
  "Aborted",
  "OutOfRange",
  "Unimplemented",
  "Internal",
  "Unavailable",
  "DataLoss",
  "Unauthenticated",
];

/** The gRPC status name of an error, as upstream's code label (status.Code(err).String()). */
export function grpcCodeName(e: unknown): string {
  return e instanceof GrpcError ? (GRPC_CODE_NAMES[e.code] ?? `Code(${e.code})`) : "Unknown";
}

export function instrumentCri(cri: CriClient, registry: Registry, opts: RuntimeMetricsOptions = {}, nowMs: () => number = () => performance.now()): CriClient {
  const m = runtimeFamilies(registry);
  // Own properties, not a prototype link: decorators above this one copy with a spread, which would
  // drop inherited ones (close, endpoint) — the node's CRI connection was left open at shutdown.
  const out = { ...cri } as CriClient;
  for (const [method, op] of Object.entries(CRI_OPERATION_TYPES) as [keyof CriClient, string][]) {
    const original = cri[method];
    if (typeof original !== "function") continue;
    const wrapped = async (...args: unknown[]) => {
      const labels = { operation_type: op };
      // The error series exists (at 0) from the first call on: dashboards read 0 errors, not no data.
      m.errors.inc(labels, 0);
      const start = nowMs();
      before(method, args);
      try {
        const r = await (original as (...a: unknown[]) => Promise<unknown>).apply(cri, args);
        afterSuccess(method, args, r);
        return r;
      } catch (e) {
        m.errors.inc(labels);
        afterError(method, args, e);
        throw e;
      } finally {
        const seconds = (nowMs() - start) / 1000;
        m.ops.inc(labels);
        m.duration.observe(seconds, labels);
        if (method === "runPodSandbox") m.sandboxDuration.observe(seconds, { runtime_handler: String(args[1] ?? "") });
      }
    };
    Object.defineProperty(out, method, { value: wrapped, enumerable: true });
  }
  // As upstream's startContainer: every attempt counts when CreateContainer is called; a failing
  // CreateContainer or StartContainer counts an error with its gRPC code.
  const created = new Map<string, ContainerType>();
  function before(method: keyof CriClient, args: unknown[]) {
    if (method === "createContainer") m.startedContainers.inc({ container_type: opts.containerType?.(args[1] as ContainerConfig) ?? "container" });
  }
  function afterSuccess(method: keyof CriClient, args: unknown[], result: unknown) {
    if (method === "runPodSandbox") m.startedPods.inc();
    else if (method === "createContainer") created.set(String(result), opts.containerType?.(args[1] as ContainerConfig) ?? "container");
    else if (method === "startContainer" || method === "removeContainer") created.delete(String(args[0]));
  }
  function afterError(method: keyof CriClient, args: unknown[], e: unknown) {
    if (method === "runPodSandbox") {
      m.startedPodsErrors.inc();
      m.sandboxErrors.inc({ runtime_handler: String(args[1] ?? "") });
    } else if (method === "createContainer") {
      m.startedContainersErrors.inc({ container_type: opts.containerType?.(args[1] as ContainerConfig) ?? "container", code: grpcCodeName(e) });
    } else if (method === "startContainer") {
      const id = String(args[0]);
      m.startedContainersErrors.inc({ container_type: created.get(id) ?? "container", code: grpcCodeName(e) });
      created.delete(id);
    }
  }
  return out;
}
