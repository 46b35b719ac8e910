// A container's device plugin run options merged into its CRI config, in upstream's order
// (GenerateRunContainerOptions + generateContainerConfig): the devices' envs before the container's
// own (a runtime keeps the last of a name, so the pod's env wins), their mounts before the volumes',
// the device nodes and CDI devices as given, and their annotations under the kubelet's own.
import type { ContainerConfig } from "../../cri/types.ts";

/** What the device manager adds to a container (src/pod/devicemanager DeviceRunContainerOptions). */
export interface DeviceRunOptions {
  envs: { key: string; value: string }[];
  mounts: { containerPath: string; hostPath: string; readonly: boolean }[];
  devices: { containerPath: string; hostPath: string; permissions: string }[];
  annotations: { key: string; value: string }[];
  cdiDevices: { name: string }[];
}

export function withDeviceRunOptions(config: ContainerConfig, o: DeviceRunOptions | undefined): ContainerConfig {
  if (!o) return config;
  const empty = !o.envs.length && !o.mounts.length && !o.devices.length && !o.annotations.length && !o.cdiDevices.length;
  if (empty) return config;
  return {
    ...config,
    envs: [...o.envs, ...(config.envs ?? [])],
    mounts: [...o.mounts.map((m) => ({ containerPath: m.containerPath, hostPath: m.hostPath, readonly: m.readonly })), ...(config.mounts ?? [])],
    devices: [...(config.devices ?? []), ...o.devices],
    annotations: { ...Object.fromEntries(o.annotations.map((a) => [a.key, a.value])), ...(config.annotations ?? {}) },
    ...(o.cdiDevices.length ? { CDIDevices: [...(config.CDIDevices ?? []), ...o.cdiDevices] } : {}),
  };
}
