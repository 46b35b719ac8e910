// The devices assigned to each pod's containers (upstream pod_devices.go): podUID → container →
// resource → the device ids by NUMA node and the plugin's Allocate answer. Pure data and the merge of
// a container's answers into its run options (deviceRunContainerOptions): the first setting of an
// env, device path, mount path or annotation wins, a conflicting later one is logged and skipped.
import { kv, log } from "../../log.ts";
import { NODE_WITHOUT_TOPOLOGY, type PodDevicesEntry } from "./checkpoint.ts";
import type { ContainerAllocateResponse, DeviceRunContainerOptions } from "./types.ts";

export interface DeviceAssignment {
  deviceIds: Map<number, string[]>;
  allocResp: ContainerAllocateResponse;
}

export interface PodDevices {
  insert(podUID: string, containerName: string, resource: string, a: DeviceAssignment): void;
  /** The container's device ids of a resource; undefined when it holds none. */
  containerDevices(podUID: string, containerName: string, resource: string): Set<string> | undefined;
  /** Every container's assignments of a pod, by container then resource. */
  podAssignments(podUID: string): Map<string, Map<string, DeviceAssignment>> | undefined;
  /** The devices in use, by resource. */
  devices(): Map<string, Set<string>>;
  pods(): Set<string>;
  delete(podUIDs: Iterable<string>): void;
  entries(): { podUID: string; containerName: string; resource: string; assignment: DeviceAssignment }[];
}

export function createPodDevices(): PodDevices {
  const devs = new Map<string, Map<string, Map<string, DeviceAssignment>>>();
  const ids = (a: DeviceAssignment) => [...a.deviceIds.values()].flat();
  return {
    insert(podUID, containerName, resource, a) {
      const pod = devs.get(podUID) ?? new Map<string, Map<string, DeviceAssignment>>();
      devs.set(podUID, pod);
      const c = pod.get(containerName) ?? new Map<string, DeviceAssignment>();
      pod.set(containerName, c);
      c.set(resource, a);
    },
    containerDevices(podUID, containerName, resource) {
      const a = devs.get(podUID)?.get(containerName)?.get(resource);
      return a && new Set(ids(a));
    },
    podAssignments: (podUID) => devs.get(podUID),
    devices() {
      const out = new Map<string, Set<string>>();
      for (const pod of devs.values())
        for (const c of pod.values())
          for (const [r, a] of c) {
            const s = out.get(r) ?? new Set<string>();
            for (const id of ids(a)) s.add(id);
            out.set(r, s);
          }
      return out;
    },
    pods: () => new Set(devs.keys()),
    delete(podUIDs) {
      for (const uid of podUIDs) devs.delete(uid);
    },
    entries() {
      const out: ReturnType<PodDevices["entries"]> = [];
      for (const [podUID, pod] of devs)
        for (const [containerName, c] of pod) for (const [resource, assignment] of c) out.push({ podUID, containerName, resource, assignment });
      return out;
    },
  };
}

/** Device ids by NUMA node, from the plugin's devices' topology (upstream allocDevicesWithNUMA). */
export function devicesPerNuma(ids: readonly string[], topologyOf: (id: string) => { ID: number }[] | undefined): Map<number, string[]> {
  const out = new Map<number, string[]>();
  const add = (node: number, id: string) => out.set(node, [...(out.get(node) ?? []), id]);
  for (const id of ids) {
    const nodes = topologyOf(id) ?? [];
    if (nodes.length === 0) add(NODE_WITHOUT_TOPOLOGY, id);
    for (const n of nodes) add(n.ID, id);
  }
  return out;
}

/** Checkpoint entries to assignments; an entry whose answer does not decode is logged and left out. */
export function fromCheckpointEntries(entries: PodDevicesEntry[], decode: (b: Uint8Array) => ContainerAllocateResponse, into: PodDevices): void {
  for (const e of entries) {
    try {
      into.insert(e.podUID, e.containerName, e.resourceName, { deviceIds: e.deviceIds, allocResp: decode(e.allocResp) });
    } catch (err) {
      log.error(
        `Can't unmarshal allocResp ${kv({ podUID: e.podUID, containerName: e.containerName, resourceName: e.resourceName, error: (err as Error).message })}`,
      );
    }
  }
}

/** Upstream deviceRunContainerOptions: the container's answers merged, resources in the order given. */
export function deviceRunContainerOptions(resources: Iterable<ContainerAllocateResponse>): DeviceRunContainerOptions {
  const opts: DeviceRunContainerOptions = { envs: [], mounts: [], devices: [], annotations: [], cdiDevices: [] };
  const seen = {
    env: new Map<string, string>(),
    dev: new Map<string, string>(),
    mount: new Map<string, string>(),
    ann: new Map<string, string>(),
    cdi: new Set<string>(),
  };
  const first = (m: Map<string, string>, what: string, k: string, v: string): boolean => {
    const had = m.get(k);
    if (had === undefined) return (m.set(k, v), true);
    if (had !== v) log.error(`${what} has conflicting setting ${kv({ key: k, kept: had, skipped: v })}`);
    return false;
  };
  for (const r of resources) {
    for (const [k, v] of Object.entries(r.envs ?? {})) if (first(seen.env, "Environment variable", k, v)) opts.envs.push({ key: k, value: v });
    for (const d of r.devices ?? []) if (first(seen.dev, "Container device", d.containerPath, d.hostPath)) opts.devices.push({ ...d });
    for (const m of r.mounts ?? [])
      if (first(seen.mount, "Container mount", m.containerPath, m.hostPath))
        opts.mounts.push({ containerPath: m.containerPath, hostPath: m.hostPath, readonly: m.readOnly === true });
    for (const [k, v] of Object.entries(r.annotations ?? {})) if (first(seen.ann, "Annotation", k, v)) opts.annotations.push({ key: k, value: v });
    for (const c of r.cdiDevices ?? []) {
      if (seen.cdi.has(c.name)) continue;
      seen.cdi.add(c.name);
      opts.cdiDevices.push({ name: c.name });
    }
  }
  return opts;
}
