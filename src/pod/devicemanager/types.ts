// The device plugin API's messages as bunlet holds them (protobufjs objects of api.proto, camelCase).

export const HEALTHY = "Healthy";
export const UNHEALTHY = "Unhealthy";

export interface DevicePluginOptions {
  preStartRequired: boolean;
  getPreferredAllocationAvailable: boolean;
}

export interface PluginDevice {
  ID: string;
  health: string;
  topology?: { nodes: { ID: number }[] } | null;
}

export interface ContainerAllocateResponse {
  envs: Record<string, string>;
  mounts: { containerPath: string; hostPath: string; readOnly: boolean }[];
  devices: { containerPath: string; hostPath: string; permissions: string }[];
  annotations: Record<string, string>;
  cdiDevices: { name: string }[];
}

/** Upstream DeviceRunContainerOptions: what a container's devices add to its CRI config. */
export type { DeviceRunOptions as DeviceRunContainerOptions } from "../kuberuntime/device-options.ts";
