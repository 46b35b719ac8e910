// Volume operation metrics (upstream pkg/volume/util/metrics.go): storage_operation_duration_seconds
// {volume_plugin,operation_name,status,migrated} with upstream's buckets, and storage_operation_errors_total
// {volume_plugin,operation_name}, which the kubelet dashboard still queries. Each (plugin, operation)
// gets its error series at 0 on first use, so "no errors" reads as 0 rather than as no data.
import type { StorageOperation } from "../pod/kuberuntime/index.ts";
import type { Registry } from "../server/metrics.ts";
import { STORAGE_OPERATION_BUCKETS } from "./buckets.ts";

export function storageMetrics(
  registry: Registry,
  seededPlugins: readonly string[] = ["kubernetes.io/empty-dir", "kubernetes.io/host-path"],
  nowMs: () => number = () => performance.now(),
): StorageOperation {
  const duration = registry.histogram({
    name: "storage_operation_duration_seconds",
    help: "Storage operation duration",
    labelNames: ["volume_plugin", "operation_name", "status", "migrated"],
    buckets: STORAGE_OPERATION_BUCKETS,
  });
  const errors = registry.counter({
    name: "storage_operation_errors_total",
    help: "Storage operation errors",
    labelNames: ["volume_plugin", "operation_name"],
  });
  const seed = (labels: { volume_plugin: string; operation_name: string }) => {
    errors.inc(labels, 0);
    duration.seed({ ...labels, status: "success", migrated: "false" });
  };
  // The plugins bunlet sets up itself start at zero, so rate() sees their first operation too.
  for (const volume_plugin of seededPlugins) for (const operation_name of ["volume_mount", "volume_unmount"]) seed({ volume_plugin, operation_name });
  return (op, fn) => {
    const labels = { volume_plugin: op.volumePlugin, operation_name: op.operationName };
    seed(labels);
    const start = nowMs();
    let status = "fail-unknown";
    try {
      const r = fn();
      status = "success";
      return r;
    } catch (e) {
      errors.inc(labels);
      throw e;
    } finally {
      duration.observe((nowMs() - start) / 1000, { ...labels, status, migrated: "false" });
    }
  };
}
