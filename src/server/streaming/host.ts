// What the streaming endpoints ask of the rest of the kubelet (upstream server.HostInterface's
// GetExec/GetAttach/GetPortForward/RunInContainer, implemented in kubelet_pods.go and kuberuntime):
// find the pod (pod manager) and its container or sandbox (runtime), then ask the CRI for a URL on
// the runtime's streaming server, or run the command (ExecSync) for /run.
import type { CriClient, StreamOptions } from "../../cri/client.ts";
import type { RuntimePod } from "../../pod/runtime.ts";
import type { StreamTarget } from "./params.ts";

export interface StreamingHost {
  getExec(t: StreamTarget, cmd: string[], streams: StreamOptions): Promise<string>;
  getAttach(t: StreamTarget, streams: StreamOptions): Promise<string>;
  getPortForward(t: StreamTarget, ports: number[]): Promise<string>;
  /**
   * stdout then stderr of the command (ExecSync); rejects when it exits non-zero. As upstream
   * (RunInContainer with the request's context) the call is cancelled — and the runtime kills the
   * command — when `signal` aborts (the client went away); the CRI deadline (runtimeRequestTimeout)
   * bounds it otherwise, and the reply is capped at the CRI's 16 MiB.
   */
  runInContainer(t: StreamTarget, cmd: string[], signal?: AbortSignal): Promise<Uint8Array>;
}

/** "pod does not exist": the pod manager does not know it (upstream answers 404 before anything else). */
export class PodNotFoundError extends Error {
  override name = "PodNotFoundError";
}

/** A runtime lookup or command failure (upstream: a plain error, 500). */
export class StreamingError extends Error {
  override name = "StreamingError";
}

type ApiPod = {
  metadata?: { name?: string; namespace?: string; uid?: string };
  spec?: {
    containers?: { name?: string; tty?: boolean }[];
    initContainers?: { name?: string; tty?: boolean }[];
    ephemeralContainers?: { name?: string; tty?: boolean }[];
  };
};

export interface CriStreamingHostDeps {
  /** Pods bound to this node (v1 Pods), the pod manager's view. */
  getPods(): readonly object[] | Promise<readonly object[]>;
  /** Pods as the runtime sees them (running containers and sandboxes). */
  getRuntimePods(): Promise<readonly RuntimePod[]>;
  cri: Pick<CriClient, "exec" | "attach" | "portForward" | "execSync">;
}

const fullName = (t: StreamTarget) => `${t.pod}_${t.namespace}`;

export function createCriStreamingHost(deps: CriStreamingHostDeps): StreamingHost {
  /** Upstream GetPodByName: 404 "pod does not exist" (the optional UID must match as well). */
  async function apiPod(t: StreamTarget): Promise<ApiPod> {
    const pod = ((await deps.getPods()) as ApiPod[]).find((p) => p.metadata?.namespace === t.namespace && p.metadata?.name === t.pod);
    if (!pod || (t.uid !== "" && pod.metadata?.uid !== t.uid)) throw new PodNotFoundError("pod does not exist");
    return pod;
  }
  async function runtimePod(t: StreamTarget, uid: string): Promise<RuntimePod | undefined> {
    return (await deps.getRuntimePods()).find((p) => (uid !== "" ? p.uid === uid : p.namespace === t.namespace && p.name === t.pod));
  }
  /** Upstream findContainer: the running container of that name, by pod UID (or full name). */
  async function containerId(t: StreamTarget): Promise<string> {
    const pod = await apiPod(t);
    const rp = await runtimePod(t, t.uid || pod.metadata?.uid || "");
    const c = rp?.containers.find((x) => x.name === t.container && x.state === "running") ?? rp?.containers.find((x) => x.name === t.container);
    if (!c) throw new StreamingError(`container not found (${JSON.stringify(t.container)})`);
    return c.id;
  }
  return {
    getExec: async (t, cmd, streams) => deps.cri.exec(await containerId(t), cmd, streams),
    async getAttach(t, streams) {
      // The TTY setting must match the container's (it cannot change after the process started).
      const pod = await apiPod(t);
      const spec = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? []), ...(pod.spec?.ephemeralContainers ?? [])].find(
        (c) => c.name === t.container,
      );
      if (!spec) throw new StreamingError(`container ${t.container} not found in pod ${fullName(t)}`);
      const tty = spec.tty === true;
      return deps.cri.attach(await containerId(t), { ...streams, tty, stderr: streams.stderr && !tty });
    },
    async getPortForward(t, ports) {
      const pod = await apiPod(t);
      const rp = await runtimePod(t, pod.metadata?.uid ?? "");
      const sandbox = rp?.sandboxIds[0];
      if (!sandbox) throw new StreamingError(`pod not found (${JSON.stringify(fullName(t))})`);
      return deps.cri.portForward(sandbox, ports);
    },
    async runInContainer(t, cmd, signal) {
      const r = await deps.cri.execSync(await containerId(t), cmd, 0, signal);
      const out = Buffer.concat([r.stdout, r.stderr]);
      if (r.exitCode !== 0) throw new StreamingError(`command '${cmd.join(" ")}' exited with ${r.exitCode}: ${Buffer.from(r.stderr).toString()}`);
      return out;
    },
  };
}
