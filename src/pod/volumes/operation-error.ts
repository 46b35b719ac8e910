// The step of upstream's volume operations (pkg/volume/util/operationexecutor operation_generator.go)
// a set-up failed in, which names it in the FailedMount/FailedMapVolume event: "MountVolume.SetUp
// failed …" by default, "MountVolume.MountDevice failed …" for a device mount (a local path's check, a
// CSI NodeStageVolume), "MapVolume.MapPodDevice failed …" for a raw block volume's mapping.

/** A failure of upstream's MountDevice step (the local path's check, a CSI volume's staging). */
export class MountDeviceError extends Error {
  override name = "MountDeviceError";
}

/** A failure of a raw block volume's map steps (upstream MapVolume.FindMapperPluginBySpec, .SetUpDevice, .MapPodDevice, .MapBlockVolume). */
export class MapVolumeError extends Error {
  override name = "MapVolumeError";
  constructor(
    readonly step: "FindMapperPluginBySpec" | "SetUpDevice" | "MapPodDevice" | "MapBlockVolume" | "MarkVolumeAsMounted",
    message: string,
  ) {
    super(message);
  }
}

/** The operation and step upstream's event names for a set-up error. */
export function volumeOperationStep(e: Error): string {
  if (e instanceof MountDeviceError) return "MountVolume.MountDevice";
  if (e instanceof MapVolumeError) return `MapVolume.${e.step}`;
  return "MountVolume.SetUp";
}
