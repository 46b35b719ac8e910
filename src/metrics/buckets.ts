// Bucket layouts of the kubelet's histograms, as upstream declares them (ExponentialBuckets and
// pkg/kubelet/metrics podStartupDurationBuckets); DefBuckets is server/metrics.ts' DEFAULT_BUCKETS.

/** ExponentialBuckets(start, factor, count), as client_golang computes them. */
export function exponentialBuckets(start: number, factor: number, count: number): number[] {
  const out: number[] = [];
  for (let i = 0, v = start; i < count; i++, v *= factor) out.push(v);
  return out;
}

/** kubelet_pod_start_duration_seconds and kubelet_pod_start_sli_duration_seconds. */
export const POD_STARTUP_BUCKETS = [0.5, 1, 2, 3, 4, 5, 6, 8, 10, 20, 30, 45, 60, 120, 180, 240, 300, 360, 480, 600, 900, 1200, 1800, 2700, 3600] as const;

/** kubelet_runtime_operations_duration_seconds: ExponentialBuckets(.005, 2.5, 14). */
export const RUNTIME_OPERATION_BUCKETS = exponentialBuckets(0.005, 2.5, 14);

/** storage_operation_duration_seconds (pkg/volume/util/metrics.go). */
export const STORAGE_OPERATION_BUCKETS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 25, 50, 120, 300, 600] as const;
