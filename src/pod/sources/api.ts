// API-server pod source (upstream pkg/kubelet/config/apiserver.go: a reflector over
// pods?fieldSelector=spec.nodeName=<node> feeding an UndeltaStore that pushes the whole set as SET
// on every change). list → SET; watch from the list's resourceVersion with allowWatchBookmarks;
// a bookmark only moves the resume point; a dropped watch resumes from the last resourceVersion seen;
// 410 Gone (compacted) → relist. API server down → back-off (reflector: 800 ms doubling to 30 s);
// the last set stays, so pods keep running.
import { kv, log } from "../../log.ts";
import type { Clock } from "../../clock.ts";
import { isGone, watchEvents, type KubeClient } from "../../kube/index.ts";
import { backoff } from "../../kube/backoff.ts";
import { decodePod, type DecodedPod } from "../manifest.ts";
import { UNSUPPORTED_SPEC_ANNOTATION, unsupportedStandIn } from "../admit-unsupported.ts";
import { apiStatusForGates } from "../readiness-gates.ts";
import { podKey } from "../pod-like.ts";
import type { Pod } from "../types.ts";
import type { PodUpdate } from "./update.ts";

export interface ApiSourceOptions {
  client: KubeClient;
  nodeName: string;
  clock: Clock;
  onUpdate: (u: PodUpdate) => void;
  /** Server-side watch timeout, as the reflector's random 5–10 min (seconds). */
  watchTimeoutSeconds?: number;
  backoffInitialMs?: number;
  backoffMaxMs?: number;
  /** Node autonomy: the API server's pod objects (managedFields left out), the whole set at each change. */
  onObjects?: (objects: unknown[]) => void;
  /** Node autonomy: a list failed before any succeeded (the API server unreachable since the start). */
  onListFailed?: (e: Error) => void;
}

export interface ApiPodSource {
  start(): void;
  stop(): void;
  /** The resourceVersion the next watch resumes from (for tests and logs). */
  resourceVersion(): string | undefined;
  /**
   * The API server answers the node again (its heartbeat got through): a list/watch waiting out its
   * back-off tries now, with the back-off reset, instead of up to 30 s later.
   */
  retryNow(): void;
}

export function createApiSource(opts: ApiSourceOptions): ApiPodSource {
  const abort = new AbortController();
  const pods = new Map<string, Pod>();
  /** The objects as the API server sent them, by UID (only when opts.onObjects wants them). */
  const raw = new Map<string, unknown>();
  let listed = false;
  const path = "/api/v1/pods";
  const fieldSelector = `spec.nodeName=${opts.nodeName}`;
  const pace = backoff(opts.backoffInitialMs ?? 800, opts.backoffMaxMs ?? 30_000);
  let rv: string | undefined;
  /** Ends the back-off wait in progress, if any. */
  let wake: (() => void) | undefined;

  const push = () => {
    opts.onUpdate({ op: "SET", pods: [...pods.values()], source: "api" });
    opts.onObjects?.([...raw.values()]);
  };
  const keepRaw = (uid: string, obj: unknown) => {
    if (!opts.onObjects) return;
    if (obj === undefined) return void raw.delete(uid);
    const { managedFields: _, ...metadata } = (obj as { metadata: Record<string, unknown> }).metadata;
    raw.set(uid, { ...(obj as object), metadata });
  };

  /** Per pod UID, the fields of a newer API server last warned about (once per pod, not per event). */
  const ignoredWarned = new Map<string, string>();

  // A pod with a value bunlet cannot honour becomes a stand-in the lifecycle rejects at admission
  // (Failed/PodFeatureUnsupported, see admit-unsupported.ts); only one that cannot even be that is dropped.
  // An update of a pod already running that no longer decodes keeps the pod as it was, with the
  // update's metadata (labels, annotations, deletion): a stand-in's containers would hash differently
  // and restart the containers it was meant to leave alone.
  function decodeUpdate(obj: unknown, previous: Pod | undefined): Pod | undefined {
    const p = decode(obj);
    if (!p || !previous || previous.metadata.annotations?.[UNSUPPORTED_SPEC_ANNOTATION] !== undefined) return p;
    const why = p.metadata.annotations?.[UNSUPPORTED_SPEC_ANNOTATION];
    if (why === undefined) return p;
    const { [UNSUPPORTED_SPEC_ANNOTATION]: _, ...annotations } = p.metadata.annotations ?? {};
    log.warn(`API pod update uses fields bunlet does not support; the pod keeps running as it was ${kv({ pod: podKey(p), error: why })}`);
    return { ...previous, metadata: { ...p.metadata, annotations } };
  }

  function decode(obj: unknown): Pod | undefined {
    const { pod, errors, ignored } = decodeApiPod(obj);
    if (pod) {
      const fields = ignored?.join(",");
      if (fields && ignoredWarned.get(pod.metadata.uid) !== fields) {
        ignoredWarned.set(pod.metadata.uid, fields);
        log.warn(
          `API pod has fields newer than bunlet's v1 Pod (Kubernetes v1.37); ignoring them as an older kubelet would ${kv({ pod: podKey(pod), fields })}`,
        );
      }
      return pod;
    }
    const standIn = decodePod(unsupportedStandIn(podView(obj), errors), "api", "", "api").pod;
    const o = obj as { metadata?: { namespace?: string; name?: string } };
    const error = errors.map((e) => e.message).join("; ");
    if (standIn)
      log.warn(
        `API pod uses fields bunlet does not support; rejecting it at admission ${kv({ pod: `${o?.metadata?.namespace}/${o?.metadata?.name}`, error })}`,
      );
    else log.error(`API pod rejected ${kv({ pod: `${o?.metadata?.namespace}/${o?.metadata?.name}`, error })}`);
    return standIn;
  }

  async function list(): Promise<void> {
    const res = await opts.client.request<{ metadata: { resourceVersion: string }; items: unknown[] }>({
      path,
      query: { fieldSelector },
      signal: abort.signal,
    });
    const before = new Map(pods);
    pods.clear();
    raw.clear();
    for (const item of res.items) {
      const p = decodeUpdate(item, before.get((item as { metadata?: { uid?: string } })?.metadata?.uid ?? ""));
      if (p) pods.set(p.metadata.uid, p);
      if (p) keepRaw(p.metadata.uid, item);
    }
    listed = true;
    for (const uid of ignoredWarned.keys()) if (!pods.has(uid)) ignoredWarned.delete(uid);
    rv = res.metadata.resourceVersion;
    log.info(`API pods listed ${kv({ node: opts.nodeName, pods: pods.size, resourceVersion: rv })}`);
    push();
  }

  async function watch(): Promise<void> {
    const query = {
      fieldSelector,
      resourceVersion: rv,
      allowWatchBookmarks: "true",
      timeoutSeconds: String(opts.watchTimeoutSeconds ?? 300 + Math.floor(Math.random() * 300)),
    };
    for await (const ev of watchEvents(opts.client, path, query, abort.signal)) {
      pace.reset();
      const objRv = ev.object?.metadata?.resourceVersion as string | undefined;
      if (ev.type === "BOOKMARK") {
        if (objRv) rv = objRv;
        continue;
      }
      const uid = ev.object?.metadata?.uid as string | undefined;
      if (objRv) rv = objRv;
      if (!uid) continue;
      if (ev.type === "DELETED") {
        pods.delete(uid);
        keepRaw(uid, undefined);
        ignoredWarned.delete(uid);
      } else {
        const p = ev.type === "MODIFIED" ? decodeUpdate(ev.object, pods.get(uid)) : decode(ev.object);
        if (p) pods.set(uid, p);
        else pods.delete(uid);
        keepRaw(uid, p ? ev.object : undefined);
      }
      push();
    }
  }

  async function run(): Promise<void> {
    while (!abort.signal.aborted) {
      try {
        if (rv === undefined) await list();
        await watch();
      } catch (e) {
        if (abort.signal.aborted) return;
        if (isGone(e)) {
          log.info(`API pod watch expired; relisting ${kv({ resourceVersion: rv })}`);
          rv = undefined;
          continue;
        }
        if (!listed) opts.onListFailed?.(e as Error);
        const delay = pace.next();
        log.warn(`API pod list/watch failed; pods keep running ${kv({ retryInMs: delay, error: (e as Error).message })}`);
        await sleep(opts.clock, delay, abort.signal, (w) => (wake = w));
        wake = undefined;
      }
    }
  }

  return {
    start() {
      void run();
    },
    stop() {
      abort.abort();
    },
    resourceVersion: () => rv,
    retryNow() {
      if (!wake) return;
      log.info(`API server reachable again; retrying the pod list/watch now ${kv({ node: opts.nodeName })}`);
      pace.reset();
      wake();
    },
  };
}

/** Waits `ms`, or until aborted, or until the function handed to `onWake` is called. */
function sleep(clock: Clock, ms: number, signal: AbortSignal, onWake?: (wake: () => void) => void): Promise<void> {
  return new Promise((resolve) => {
    onWake?.(done);
    const h = clock.setTimeout(done, ms);
    function done() {
      clock.clearTimeout(h);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}

/**
 * Metadata the kubelet acts on (upstream checkAndUpdatePod compares labels, annotations and the
 * deletion fields) or reports (generation, as status.observedGeneration); resourceVersion, managedFields and the status are the API server's (of the status,
 * decode keeps the conditions readiness gates read).
 */
const KEPT_METADATA = [
  "name",
  "namespace",
  "uid",
  "labels",
  "annotations",
  "creationTimestamp",
  "generation",
  "generateName",
  "deletionTimestamp",
  "deletionGracePeriodSeconds",
  "ownerReferences",
];

/**
 * An API server's Pod object as the kubelet holds it: the metadata it acts on, the spec decoded (every
 * v1.37 field), and of the status the conditions readiness gates read (readiness-gates.ts).
 */
export function decodeApiPod(obj: unknown): DecodedPod {
  const decoded = decodePod(podView(obj), "api", "", "api");
  if (!decoded.pod) return decoded;
  const status = apiStatusForGates(decoded.pod.spec, (obj as { status?: unknown }).status);
  return status ? { ...decoded, pod: { ...decoded.pod, status } } : decoded;
}

function podView(obj: unknown): unknown {
  const o = obj as { metadata?: Record<string, unknown>; status?: unknown };
  if (!o || typeof o !== "object" || !o.metadata) return obj;
  const metadata = Object.fromEntries(Object.entries(o.metadata).filter(([k]) => KEPT_METADATA.includes(k)));
  return { ...o, metadata, status: undefined };
}
