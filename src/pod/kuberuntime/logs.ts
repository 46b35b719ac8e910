// Container log files as the log manager rotates them (upstream kuberuntime_logs.go and
// logs.ContainerLogManager's view of the runtime): a function over the shared KubeRuntimeContext
// (context.ts), whose logPaths cache keeps each running container's path.
import type { KubeRuntimeContext } from "./context.ts";

/**
 * Running containers and their log files, as upstream's ContainerLogManager sees them: only running
 * containers are rotated (a stopped one writes nothing more), and containerd reports log_path
 * already joined with the sandbox's log_directory.
 *
 * A container's log path never changes: it is asked once (ContainerStatus; a pod status read, which
 * holds it already, fills it in too — container.ts containerStatuses) and kept while the container
 * runs, so a rotation pass over 100 idle containers is one ListContainers, not 101 calls
 * (with 100 containers, asking every 10 s would be 10 ContainerStatus calls a second).
 */
export async function listContainerLogs(ctx: KubeRuntimeContext): Promise<{ containerId: string; logPath: string }[]> {
  const { cri, logPaths } = ctx;
  const out: { containerId: string; logPath: string }[] = [];
  // The last relist saw no sandbox, so no container: nothing to rotate, no listing.
  if (ctx.relist.sandboxesListed === 0) {
    logPaths.clear();
    return out;
  }
  const running = await cri.listContainers({ state: { state: "CONTAINER_RUNNING" } });
  const ids = new Set(running.map((c) => c.id));
  for (const id of logPaths.keys()) if (!ids.has(id)) logPaths.delete(id);
  for (const c of running) {
    let logPath = logPaths.get(c.id);
    if (logPath === undefined) {
      const st = await cri.containerStatus(c.id).catch(() => undefined);
      if (st?.status?.state !== "CONTAINER_RUNNING" || !st.status.logPath) continue;
      logPath = st.status.logPath;
      logPaths.set(c.id, logPath);
    }
    out.push({ containerId: c.id, logPath });
  }
  return out;
}
