// staticPodURL source (upstream pkg/kubelet/config/http.go): GET the URL with the configured headers
// every httpCheckFrequency; the body is a Pod, a PodList or a List (YAML or JSON). A failed fetch keeps
// the previous pods (a flaky endpoint must not stop workloads); an empty body means "no pods".
import { kv, log } from "../../log.ts";
import type { Clock } from "../../clock.ts";
import { decodeManifests, ManifestError } from "../manifest.ts";
import { applyStaticPodDefaults } from "../static-pod.ts";
import { periodicSource, type PodSource } from "./pod-source.ts";
import { readBoundedBody } from "./http-body.ts";
import { createLastGood, dropDuplicateNames, validateStaticPods } from "./static-pods.ts";
import type { PodUpdate } from "./update.ts";

export interface HttpSourceOptions {
  url: string;
  /** staticPodURLHeader: header name → values. */
  headers?: Record<string, string | string[]>;
  nodeName: string;
  checkFrequencyMs: number;
  clock: Clock;
  onUpdate: (u: PodUpdate) => void;
  onErrors?: (errors: ManifestError[]) => void;
  fetch?: typeof fetch;
  timeoutMs?: number;
  /** Response body cap (default MAX_MANIFEST_BYTES). */
  maxBodyBytes?: number;
}

export function createHttpSource(opts: HttpSourceOptions): PodSource {
  const doFetch = opts.fetch ?? fetch;
  let current: ManifestError[] = [];
  let lastLogged = "";
  let keptLogged = "";
  const lastGood = createLastGood((url, pods, errors) => {
    const msg = `invalid new version of the static pod URL's manifest: its pods keep running as they were ${kv({ url, pods: pods.map((p) => p.metadata.name).join(","), errors: errors.length, firstError: errors[0]!.message })}`;
    if (msg !== keptLogged) log.warn(msg);
    keptLogged = msg;
  });

  const headers = new Headers();
  for (const [k, v] of Object.entries(opts.headers ?? {})) for (const one of Array.isArray(v) ? v : [v]) headers.append(k, one);

  const fail = (msg: string) => {
    current = [new ManifestError(opts.url, "", msg)];
    opts.onErrors?.(current);
    if (msg !== lastLogged) log.error(`static pod URL failed ${kv({ url: opts.url, error: msg })}`);
    lastLogged = msg;
  };

  const resync = async () => {
    try {
      await readOnce();
    } catch (e) {
      // Whatever the body did (decode, defaults), it is this URL's error; polling goes on.
      fail(`unable to process the response body: ${(e as Error).message}`);
    }
  };

  const readOnce = async () => {
    let text: string;
    try {
      const ac = new AbortController();
      const signal = AbortSignal.any([ac.signal, AbortSignal.timeout(opts.timeoutMs ?? 10_000)]);
      const res = await doFetch(opts.url, { headers, signal });
      text = await readBoundedBody(res, () => ac.abort(), opts.maxBodyBytes);
      if (res.status !== 200) return fail(`${opts.url}: ${res.status} ${res.statusText}, body: ${text.slice(0, 200)}`);
    } catch (e) {
      return fail((e as Error).message);
    }
    if (source.stopped()) return;
    const decoded = text.trim() === "" ? { pods: [], errors: [] } : decodeManifests(text, opts.url);
    const defaulted = decoded.pods.map((p) => applyStaticPodDefaults(p, { nodeName: opts.nodeName, source: "http", location: opts.url }));
    const valid = validateStaticPods(defaulted, opts.url);
    const unique = dropDuplicateNames(valid.pods.map((pod) => ({ pod, location: opts.url })));
    const errors = [...decoded.errors, ...valid.errors, ...unique.errors];
    current = errors;
    const summary = errors.map((e) => e.message).join("; ");
    if (summary && summary !== lastLogged)
      for (const e of errors) log.error(`static pod manifest rejected ${kv({ url: opts.url, field: e.field || undefined, error: e.detail })}`);
    lastLogged = summary;
    opts.onErrors?.(errors);
    const pods = lastGood.resolve(opts.url, unique.pods, errors);
    opts.onUpdate({ op: "SET", pods, source: "http" });
  };

  const source = periodicSource({ clock: opts.clock, checkFrequencyMs: opts.checkFrequencyMs, resync, errors: () => current });
  return source;
}
