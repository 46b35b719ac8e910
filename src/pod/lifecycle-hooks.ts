// Container lifecycle hooks (upstream pkg/kubelet/lifecycle/handlers.go handlerRunner.Run): a
// postStart or preStop handler is an exec in the container (CRI ExecSync), an HTTP GET to the pod
// (its IP unless the handler names a host; the status code is not checked, only that a response came)
// or a sleep. The result is a failure message in upstream's words, or undefined on success. What the
// outcome means (kill after a failed postStart, grace period accounting for preStop) is the runtime's
// business (kuberuntime/manager.ts), as upstream's kuberuntime_container.go.
import { readAtMost } from "./read-at-most.ts";
import type { ExecResult } from "./runtime.ts";

/** core/v1 LifecycleHandler, structurally (exactly one of exec, httpGet, sleep; validated in types.ts). */
export interface LifecycleHandlerSpec {
  exec?: { command: string[] };
  httpGet?: {
    path?: string;
    port: number | string;
    host?: string;
    scheme?: string;
    httpHeaders?: { name: string; value: string }[];
  };
  sleep?: { seconds: number };
}

export interface HookTarget {
  pod: { name: string; namespace: string; uid: string };
  container: { name: string; ports?: { name?: string; containerPort: number }[] };
  containerId: string;
  /** The pod's IP (or the node's for hostNetwork): where httpGet goes without a host. */
  podIP?: string;
}

export interface HookDeps {
  /** CRI ExecSync; timeoutSeconds 0 = no hook-specific timeout (upstream passes 0). */
  execSync(containerId: string, cmd: string[], timeoutSeconds: number): Promise<ExecResult>;
  fetch?: typeof fetch;
}

/** upstream format.Pod: name_namespace(uid). */
export const formatPod = (p: HookTarget["pod"]) => `${p.name}_${p.namespace}(${p.uid})`;
/** Go's %v of a []string: [a b c]. */
const goList = (xs: string[]) => `[${xs.join(" ")}]`;

/**
 * Runs one handler. `signal` aborts it (the container is being stopped, or a preStop ran out of
 * grace): a sleep then fails as upstream's ("container terminated before sleep hook finished").
 */
export async function runLifecycleHandler(h: LifecycleHandlerSpec, t: HookTarget, deps: HookDeps, signal?: AbortSignal): Promise<string | undefined> {
  const where = `for Container "${t.container.name}" in Pod "${formatPod(t.pod)}" failed - error:`;
  if (h.exec) {
    let r: ExecResult;
    try {
      r = await deps.execSync(t.containerId, h.exec.command, 0);
    } catch (e) {
      return `Exec lifecycle hook (${goList(h.exec.command)}) ${where} ${(e as Error).message}, message: ""`;
    }
    if (r.exitCode === 0) return undefined;
    // upstream remote runtime: CodeExitError "command '<cmd>' exited with <code>: <stderr>".
    const err = `command '${h.exec.command.join(" ")}' exited with ${r.exitCode}: ${r.stderr}`;
    return `Exec lifecycle hook (${goList(h.exec.command)}) ${where} ${err}, message: ${JSON.stringify(r.stdout + r.stderr)}`;
  }
  if (h.httpGet) {
    const err = await runHttpHandler(h.httpGet, t, deps, signal);
    return err === undefined ? undefined : `HTTP lifecycle hook (${h.httpGet.path ?? "/"}) ${where} ${err}`;
  }
  if (h.sleep) {
    const ok = await sleepUnlessAborted(h.sleep.seconds * 1000, signal);
    return ok ? undefined : `Sleep lifecycle hook (${h.sleep.seconds}) ${where} container terminated before sleep hook finished`;
  }
  return `Cannot run handler: invalid handler: ${JSON.stringify(h)}`;
}

function resolvePort(port: number | string, container: HookTarget["container"]): number | undefined {
  if (typeof port === "number") return port;
  if (port === "") return 80; // upstream: an empty string port means 80
  if (/^\d+$/.test(port)) return Number(port);
  return container.ports?.find((p) => p.name === port)?.containerPort;
}

/** undefined on any HTTP response; the transport error otherwise. */
async function runHttpHandler(
  g: NonNullable<LifecycleHandlerSpec["httpGet"]>,
  t: HookTarget,
  deps: HookDeps,
  signal?: AbortSignal,
): Promise<string | undefined> {
  const host = g.host || t.podIP;
  if (!host) return "failed to find networking container: the pod has no IP";
  const port = resolvePort(g.port, t.container);
  if (port === undefined) return `couldn't find port: ${g.port} in ${t.container.name}`;
  const path = g.path ?? "/";
  const url = `${(g.scheme ?? "HTTP").toLowerCase()}://${host.includes(":") ? `[${host}]` : host}:${port}${path.startsWith("/") ? path : `/${path}`}`;
  const headers = new Headers({ "User-Agent": "kube-lifecycle/1.31", Accept: "*/*" });
  for (const x of g.httpHeaders ?? []) headers.set(x.name, x.value);
  try {
    const res = await (deps.fetch ?? fetch)(url, { headers, redirect: "manual", signal, tls: { rejectUnauthorized: false } });
    await readAtMost(res).catch(() => undefined); // upstream discardHTTPRespBody: at most 10 KiB, then closed
    return undefined;
  } catch (e) {
    return `Get "${url}": ${(e as Error).message}`;
  }
}

function sleepUnlessAborted(ms: number, signal?: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve(false);
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
