// Volume manager metrics (upstream pkg/kubelet/volumemanager/metrics): the volumes reconstructed from
// pod directories after a restart and the forced cleanups of those that could not be, each with its
// errors. The counters start at 0, as upstream's.
import type { VolumeReconstructionMetrics } from "../pod/volumemanager/index.ts";
import type { Registry } from "../server/metrics.ts";

export function volumeManagerMetrics(registry: Registry): VolumeReconstructionMetrics {
  const counter = (name: string, help: string) => {
    const c = registry.counter({ name, help });
    c.inc(undefined, 0);
    return c;
  };
  const reconstructed = counter(
    "reconstruct_volume_operations_total",
    "The number of volumes that were attempted to be reconstructed from the operating system during kubelet startup. This includes both successful and failed reconstruction.",
  );
  const reconstructErrors = counter(
    "reconstruct_volume_operations_errors_total",
    "The number of volumes that failed reconstruction from the operating system during kubelet startup.",
  );
  const forceCleaned = counter(
    "force_cleaned_failed_volume_operations_total",
    "The number of volumes that were force cleaned after their reconstruction failed during kubelet startup. This includes both successful and failed cleanups.",
  );
  const forceCleanErrors = counter(
    "force_cleaned_failed_volume_operation_errors_total",
    "The number of volumes that failed force cleanup after their reconstruction failed during kubelet startup.",
  );
  return {
    reconstructed(failed) {
      reconstructed.inc();
      if (failed) reconstructErrors.inc();
    },
    forceCleaned(failed) {
      forceCleaned.inc();
      if (failed) forceCleanErrors.inc();
    },
  };
}
