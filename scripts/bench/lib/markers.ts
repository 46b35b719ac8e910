// Containers that mark their own start, for timing pod starts without loading the runtime: each
// container's first act is to touch a file named by its pod on a hostPath (the file's mtime is when its
// process ran, in the kernel's clock), and the bench reads that one directory — polling the CRI's
// ListContainers every few ms instead would be the bench's own load on containerd, the very runtime
// whose cost is being measured. And the runtime's floor: the same pods made by bare CRI calls, no agent.
// Used by start100.ts and vs-kubelet.ts.
import { existsSync, mkdirSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import type { CriClient } from "../../../src/cri/client.ts";
import type { PodSandboxConfig } from "../../../src/cri/types.ts";
import { POD_NAME_LABEL } from "../../../src/pod/kuberuntime/labels.ts";
import { staticPodYaml } from "../../../test/support/manifests.ts";
import { pollUntil } from "../../../test/support/wait.ts";
import { BUSYBOX } from "./scratch-node.ts";

/** The container's command: mark that its process runs (a file named by the pod), then idle. */
export const markAndSleep = (name: string): string[] => ["sh", "-c", `touch /markers/${name}; exec sleep 3600`];

/** A static pod (busybox, hostNetwork, no grace period) whose container marks its start in `markers`. */
export function markerManifest(name: string, markers: string): string {
  return (
    staticPodYaml(name, {
      image: BUSYBOX,
      command: markAndSleep(name),
      terminationGracePeriodSeconds: 0,
      hostNetwork: true,
      container: "      imagePullPolicy: IfNotPresent\n      volumeMounts: [{name: markers, mountPath: /markers}]\n",
    }) + `  volumes: [{name: markers, hostPath: {path: ${markers}, type: Directory}}]\n`
  );
}

/** When the container of pod `name` marked its start, epoch ms (wall clock); undefined before it did. */
export function markerTime(markers: string, name: string): number | undefined {
  const f = join(markers, name);
  return existsSync(f) ? Number(statSync(f, { bigint: true }).mtimeNs / 1000n) / 1000 : undefined;
}

/** Containers of `node`'s pods (named <pod>-<node>) in state RUNNING, by the CRI. */
export async function runningContainers(cri: CriClient, node: string): Promise<string[]> {
  return (await cri.listContainers({ state: { state: "CONTAINER_RUNNING" } })).filter((c) => c.labels?.[POD_NAME_LABEL]?.endsWith(`-${node}`)).map((c) => c.id);
}

export interface MarkedStart {
  /** First and last container process start, ms after t0Epoch. */
  firstMs: number;
  allMs: number;
}

/**
 * Waits until `pods` markers are in `markers` (read every 20 ms), calls `onAll`, waits (up to 10 s) until
 * the CRI shows as many of `node`'s containers RUNNING, and returns the first and last start after `t0Epoch`.
 */
export async function waitMarkedRunning(o: {
  cri: CriClient;
  node: string;
  markers: string;
  pods: number;
  t0Epoch: number;
  onAll?: () => void;
}): Promise<MarkedStart> {
  await pollUntil(() => readdirSync(o.markers).length >= o.pods, `${o.pods} containers running (markers)`, 300_000, 20);
  o.onAll?.();
  const times = readdirSync(o.markers).map((f) => markerTime(o.markers, f)! - o.t0Epoch);
  // A container's process runs (and touches its marker) a moment before the runtime reports it RUNNING.
  let running = 0;
  await pollUntil(async () => (running = (await runningContainers(o.cri, o.node)).length) >= o.pods, `${o.pods} containers RUNNING in the CRI`, 10_000).catch(
    () => {
      throw new Error(`${o.pods} markers but only ${running} containers RUNNING`);
    },
  );
  return { firstMs: Math.min(...times), allMs: Math.max(...times) };
}

export interface DirectBurst extends MarkedStart {
  /** ms after the start at which each RunPodSandbox and each StartContainer returned. */
  sandboxMs: number[];
  startedMs: number[];
}

/**
 * The runtime's floor: `pods` pods (pod<i>-<node>, hostNetwork, the marker container) made by bare CRI
 * calls — RunPodSandbox → CreateContainer → StartContainer per pod, `concurrency` pods at a time — with
 * their logs under `base` and their cgroups under `cgroupRoot`. The pods are left running.
 */
export async function directBurst(o: {
  cri: CriClient;
  base: string;
  cgroupRoot: string;
  node: string;
  pods: number;
  concurrency: number;
  markers: string;
  /** The first pod's index (default 0): pod<first> … pod<first + pods − 1>. */
  first?: number;
  /** Pod i's cgroup parent (default `<cgroupRoot>/pod<i>`; a systemd slice with the systemd driver). */
  cgroupParent?: (i: number) => string;
  onAll?: () => void;
}): Promise<DirectBurst> {
  const { cri } = o;
  mkdirSync(o.markers, { recursive: true });
  const sandboxMs: number[] = [];
  const startedMs: number[] = [];
  const t0Epoch = Date.now();
  const t0 = performance.now();
  const one = async (i: number) => {
    const name = `pod${i}-${o.node}`;
    const config: PodSandboxConfig = {
      metadata: { name, namespace: "kube-system", uid: `direct-${process.pid}-${o.node}-${i}`, attempt: 0 },
      hostname: "",
      logDirectory: join(o.base, "logs", name),
      labels: { [POD_NAME_LABEL]: name },
      linux: {
        cgroupParent: o.cgroupParent?.(i) ?? `${o.cgroupRoot}/pod${i}`,
        securityContext: { namespaceOptions: { network: "NODE", pid: "CONTAINER", ipc: "POD" } },
      },
    };
    mkdirSync(config.logDirectory!, { recursive: true });
    const sb = await cri.runPodSandbox(config);
    sandboxMs.push(performance.now() - t0);
    const id = await cri.createContainer(
      sb,
      {
        metadata: { name: "main", attempt: 0 },
        image: { image: BUSYBOX },
        command: markAndSleep(name),
        mounts: [{ containerPath: "/markers", hostPath: o.markers }],
        logPath: "main/0.log",
        labels: { [POD_NAME_LABEL]: name },
        linux: { resources: {}, securityContext: {} },
      },
      config,
    );
    await cri.startContainer(id);
    startedMs.push(performance.now() - t0);
  };
  const first = o.first ?? 0;
  let next = first;
  const lanes = Array.from({ length: Math.min(o.concurrency, o.pods) }, async () => {
    while (next < first + o.pods) await one(next++);
  });
  const running = waitMarkedRunning({ cri, node: o.node, markers: o.markers, pods: o.pods, t0Epoch, onAll: o.onAll });
  await Promise.all(lanes);
  return { ...(await running), sandboxMs, startedMs };
}
