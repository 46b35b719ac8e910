// What a pod's sandbox and container configs are generated from (upstream kubelet_pods.go
// GenerateRunContainerOptions, the runtimeHelper kuberuntime asks): one ConfigInputs per pod sync,
// built over the shared KubeRuntimeContext (context.ts); syncPod adds DNS, downward API and hosts.
import { podUid } from "../pod-like.ts";
import { prepareSafeSubPath, type PodVolumeSpec } from "../volumes/index.ts";
import type { ConfigInputs } from "./config.ts";
import type { KubeRuntimeContext } from "./context.ts";
import { podDir } from "./empty-dir.ts";
import { defaultVolumeHostPath } from "./pod-volumes.ts";
import { createTerminationMessageFile } from "./termination-message.ts";
import type { KubePod } from "./types.ts";

export function inputsFor(ctx: KubeRuntimeContext, pod: KubePod, cgroupParent: string | undefined): ConfigInputs {
  const { opts, rootDir } = ctx;
  const volumeHostPath = opts.volumeHostPath ?? ((p: KubePod, name: string) => defaultVolumeHostPath(ctx, p, name));
  return {
    podLogsDir: ctx.podLogsDir,
    cgroupParent,
    memoryCapacityBytes: ctx.memoryCapacityBytes,
    seccomp: ctx.seccomp,
    cgroupHost: ctx.cgroupHost,
    ...(opts.cpuAffinity ? { cpuAffinity: (name: string) => opts.cpuAffinity!(podUid(pod), name) } : {}),
    terminationMessageFile: (name) => createTerminationMessageFile(rootDir, podUid(pod), name),
    clusterDomain: ctx.dns.clusterDomain,
    volumeHostPath: (_ref, name) => volumeHostPath(pod, name),
    prepareSubPath: (volumePath, subPath, volumeName, containerName, volumeMountIndex) =>
      prepareSafeSubPath({ volumePath, subPath, podDir: podDir(rootDir, podUid(pod)), volumeName, containerName, volumeMountIndex }),
    objects: ctx.podObjects.get(podUid(pod)),
    ...(opts.apiObjects?.serviceEnv ? { serviceEnv: () => opts.apiObjects!.serviceEnv!(pod) } : {}),
    onWarning: (reason, message) => opts.onPodWarning?.(pod, reason, message),
    readOnlyVolume: (name) => {
      const v = pod.spec.volumes?.find((x) => x.name === name) as PodVolumeSpec | undefined;
      // A claim's readOnly is its volume's ReadOnly attribute (upstream hostPath and local mounters).
      return !!(v?.downwardAPI || v?.projected || v?.secret || v?.configMap || v?.persistentVolumeClaim?.readOnly);
    },
  };
}
