// Test builders for eviction tests: pods, summaries, thresholds.
import type { PodLike } from "../../src/pod/pod-like.ts";
import type { PodStats, Summary } from "../../src/stats/summary.ts";
import { parseThresholdConfig, type ThresholdConfigInput } from "../../src/eviction/thresholds-parse.ts";
import type { Threshold } from "../../src/eviction/threshold.ts";

export const Mi = 1024 * 1024;
export const Gi = 1024 * Mi;

export interface PodOpts {
  ns?: string;
  priority?: number;
  requests?: Record<string, string>;
  limits?: Record<string, string>;
  annotations?: Record<string, string>;
  tgps?: number;
  volumes?: PodLike["spec"]["volumes"];
  tolerations?: PodLike["spec"]["tolerations"];
  containers?: PodLike["spec"]["containers"];
}

export function pod(name: string, o: PodOpts = {}): PodLike {
  const resources = o.requests || o.limits ? { ...(o.requests ? { requests: o.requests } : {}), ...(o.limits ? { limits: o.limits } : {}) } : undefined;
  return {
    metadata: { name, namespace: o.ns ?? "default", uid: `uid-${name}`, ...(o.annotations ? { annotations: o.annotations } : {}) },
    spec: {
      containers: o.containers ?? [{ name: "c", ...(resources ? { resources } : {}) }],
      ...(o.priority !== undefined ? { priority: o.priority } : {}),
      ...(o.tgps !== undefined ? { terminationGracePeriodSeconds: o.tgps } : {}),
      ...(o.volumes ? { volumes: o.volumes } : {}),
      ...(o.tolerations ? { tolerations: o.tolerations } : {}),
    },
  };
}

export interface PodStatOpts {
  memory?: number;
  rootfs?: number;
  logs?: number;
  rootfsInodes?: number;
  logsInodes?: number;
  processes?: number;
  ephemeral?: number;
  volumes?: { name: string; used: number; inodes?: number }[];
  container?: string;
}

export function podStats(p: PodLike, o: PodStatOpts = {}, time = "2024-01-01T00:00:00Z"): PodStats {
  const cname = o.container ?? p.spec.containers[0]?.name ?? "c";
  return {
    podRef: { name: p.metadata.name, namespace: p.metadata.namespace ?? "default", uid: p.metadata.uid! },
    containers: [
      {
        name: cname,
        ...(o.memory !== undefined ? { memory: { time, workingSetBytes: o.memory } } : {}),
        ...(o.rootfs !== undefined ? { rootfs: { time, usedBytes: o.rootfs, inodesUsed: o.rootfsInodes ?? 0 } } : {}),
        ...(o.logs !== undefined ? { logs: { time, usedBytes: o.logs, inodesUsed: o.logsInodes ?? 0 } } : {}),
      },
    ],
    ...(o.memory !== undefined ? { memory: { time, workingSetBytes: o.memory } } : {}),
    ...(o.processes !== undefined ? { process_stats: { process_count: o.processes } } : {}),
    ...(o.ephemeral !== undefined ? { "ephemeral-storage": { time, usedBytes: o.ephemeral } } : {}),
    ...(o.volumes ? { volume: o.volumes.map((v) => ({ name: v.name, time, usedBytes: v.used, inodesUsed: v.inodes ?? 0 })) } : {}),
  };
}

export interface NodeOpts {
  time?: string;
  memAvailable?: number;
  memWorkingSet?: number;
  allocAvailable?: number;
  allocWorkingSet?: number;
  fsAvailable?: number;
  fsCapacity?: number;
  inodesFree?: number;
  inodes?: number;
  imageFs?: { available: number; capacity: number; inodesFree?: number; inodes?: number };
  containerFs?: { available: number; capacity: number; inodesFree?: number; inodes?: number };
  maxpid?: number;
  curproc?: number;
  pods?: PodStats[];
}

export function summary(o: NodeOpts = {}): Summary {
  const time = o.time ?? "2024-01-01T00:00:00Z";
  const fsx = (f: NonNullable<NodeOpts["imageFs"]>) => ({
    time,
    availableBytes: f.available,
    capacityBytes: f.capacity,
    ...(f.inodesFree !== undefined ? { inodesFree: f.inodesFree, inodes: f.inodes } : {}),
  });
  return {
    node: {
      nodeName: "test-node",
      ...(o.memAvailable !== undefined
        ? { memory: { time, availableBytes: o.memAvailable, workingSetBytes: o.memWorkingSet ?? 1 * Gi, usageBytes: (o.memWorkingSet ?? Gi) + 100 * Mi } }
        : {}),
      ...(o.allocAvailable !== undefined
        ? {
            systemContainers: [
              {
                name: "pods",
                memory: { time, availableBytes: o.allocAvailable, workingSetBytes: o.allocWorkingSet ?? Gi, usageBytes: (o.allocWorkingSet ?? Gi) + 50 * Mi },
              },
            ],
          }
        : {}),
      ...(o.fsAvailable !== undefined
        ? {
            fs: {
              time,
              availableBytes: o.fsAvailable,
              capacityBytes: o.fsCapacity ?? 100 * Gi,
              ...(o.inodesFree !== undefined ? { inodesFree: o.inodesFree, inodes: o.inodes ?? 1_000_000 } : {}),
            },
          }
        : {}),
      ...(o.imageFs || o.containerFs
        ? { runtime: { ...(o.imageFs ? { imageFs: fsx(o.imageFs) } : {}), ...(o.containerFs ? { containerFs: fsx(o.containerFs) } : {}) } }
        : {}),
      ...(o.maxpid !== undefined ? { rlimit: { time, maxpid: o.maxpid, curproc: o.curproc ?? 0 } } : {}),
    },
    pods: o.pods ?? [],
  };
}

export function thresholds(input: ThresholdConfigInput): Threshold[] {
  return parseThresholdConfig(input);
}

/** ISO time at second s after a fixed epoch. */
export const at = (s: number) => new Date(Date.UTC(2024, 0, 1) + s * 1000).toISOString();
export const atMs = (s: number) => Date.UTC(2024, 0, 1) + s * 1000;
