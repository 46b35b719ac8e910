// The CPU manager in the agent (upstream containerManager.Start → cpuManager.Start, and the allocate
// admit handler): the topology is read from sysfs and the manager started once the runtime answers,
// before the pod lifecycle admits any pod; until then (and with `none`) containers get no cpuset.
// A manager that cannot start (a state file of another policy, a reservation that does not fit the
// machine) stops the agent, as the kubelet refuses to start.
import { readFile } from "node:fs/promises";
import { writeFileAtomic } from "../atomic-file.ts";
import type { Clock } from "../clock.ts";
import { formatCPUSet, isSubsetOf, parseCPUSet } from "../config/cpuset.ts";
import { durationMs } from "../config/duration.ts";
import type { KubeletConfiguration } from "../config/kubelet-config.ts";
import { parseQuantity, quantityMilliValue } from "../config/quantity.ts";
import type { CriClient } from "../cri/client.ts";
import { createCPUManager, discoverTopology, type CPUManager, type RunningContainer } from "../pod/cm/cpumanager/index.ts";
import { allCPUs } from "../pod/cm/cpumanager/topology.ts";
import { CONTAINER_NAME_LABEL, POD_UID_LABEL } from "../pod/kuberuntime/labels.ts";
import type { PodAdmitHandler } from "../pod/lifecycle-types.ts";
import type { PodLike } from "../pod/pod-like.ts";

export interface CPUManagerWiring {
  /** The allocate admit handler (upstream topology manager's, over the CPU manager). */
  readonly admitHandler: PodAdmitHandler;
  /** The cpuset a new container is created with; "" leaves it to the runtime. */
  cpuAffinity(podUid: string, containerName: string): string;
  /** A container's exclusive CPUs (podresources cpu_ids). */
  exclusiveCPUs(podUid: string, containerName: string): number[];
  /** CPUs the static policy may give out (podresources GetAllocatableResources cpu_ids). */
  allocatableCPUs(): number[];
  /** Discovers the topology, reads the state file and starts the reconcile loop; rejects when the kubelet would not start. */
  start(deps: { cri: CriClient; activePods(): PodLike[]; sourcesReady(): boolean }): Promise<void>;
  stop(): void;
}

export interface CPUManagerWiringInput {
  config: Pick<
    KubeletConfiguration,
    "cpuManagerPolicy" | "cpuManagerPolicyOptions" | "cpuManagerReconcilePeriod" | "reservedSystemCPUs" | "systemReserved" | "kubeReserved"
  >;
  rootDir: string;
  clock: Clock;
  /** sysfs reader (tests); default the real /sys. */
  readSysfs?: (path: string) => Promise<string | undefined>;
}

const readText = (path: string) =>
  readFile(path, "utf8").then(
    (t) => t.trim(),
    () => undefined,
  );

/** systemReserved.cpu + kubeReserved.cpu in millicores (reservedSystemCPUs already folded in by config). */
function reservedMilliCPU(c: CPUManagerWiringInput["config"]): number {
  let milli = 0;
  for (const r of [c.systemReserved?.cpu, c.kubeReserved?.cpu]) if (r) milli += quantityMilliValue(parseQuantity(r));
  return milli;
}

/** The state file's text; undefined when there is none (any other read error is the start's). */
async function readStateFile(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw e;
  }
}

/** Upstream writes checkpoints atomically: a temporary file fsynced and renamed over the old one. */
const writeStateFile = (path: string, text: string) => writeFileAtomic(path, text, { mode: 0o644 });

async function runningContainers(cri: CriClient): Promise<RunningContainer[]> {
  const list = await cri.listContainers({ state: { state: "CONTAINER_RUNNING" } });
  return list
    .filter((c) => c.labels[POD_UID_LABEL] && c.labels[CONTAINER_NAME_LABEL])
    .map((c) => ({ id: c.id, podUid: c.labels[POD_UID_LABEL]!, containerName: c.labels[CONTAINER_NAME_LABEL]! }));
}

export function createCPUManagerWiring(input: CPUManagerWiringInput): CPUManagerWiring {
  const { config } = input;
  let manager: CPUManager | undefined;
  return {
    admitHandler: (pod, active) => {
      const refused = manager?.admit(pod, active);
      return refused ? { admit: false, ...refused } : { admit: true };
    },
    cpuAffinity: (uid, name) => manager?.cpuAffinity(uid, name) ?? "",
    exclusiveCPUs: (uid, name) => [...(manager?.exclusiveCPUs(uid, name) ?? [])],
    allocatableCPUs: () => [...(manager?.allocatableCPUs() ?? [])],
    async start({ cri, activePods, sourcesReady }) {
      const topology = await discoverTopology(input.readSysfs ?? readText);
      const reserved = parseCPUSet(config.reservedSystemCPUs ?? "");
      const online = allCPUs(topology.details);
      if (!isSubsetOf(reserved, online)) throw new Error(`reserved-cpus: ${config.reservedSystemCPUs} is not a subset of online-cpus: ${formatCPUSet(online)}`);
      const m = createCPUManager({
        policyName: config.cpuManagerPolicy ?? "none",
        policyOptions: config.cpuManagerPolicyOptions,
        reconcilePeriodMs: durationMs(config.cpuManagerReconcilePeriod ?? "10s"),
        topology,
        reservedMilliCPU: reservedMilliCPU(config),
        reservedSystemCPUs: reserved,
        stateDir: input.rootDir,
        readFile: readStateFile,
        writeFile: writeStateFile,
        clock: input.clock,
      });
      await m.start({
        activePods,
        sourcesReady,
        runningContainers: () => runningContainers(cri),
        updateContainerCPUSet: (id, cpusetCpus) => cri.updateContainerResources(id, { cpusetCpus }),
      });
      manager = m;
    },
    stop: () => manager?.stop(),
  };
}
