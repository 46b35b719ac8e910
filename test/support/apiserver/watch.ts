// Watch streams as kube-apiserver serves them over HTTP/1.1 chunked JSON: one
// {"type":"ADDED|MODIFIED|DELETED|BOOKMARK|ERROR","object":…} line per event. Without a
// resourceVersion (or "0") the stream starts with ADDED for every current object; with one, the
// store's changes after it follow (etcd's watch from that revision) — or, when compaction removed
// them, a single ERROR event carrying the 410 Expired Status ("too old resource version: N (M)").
// Bookmarks (allowWatchBookmarks) carry the revision up to which this stream is complete.
import type { ServerResponse } from "node:http";
import { apiVersionOf } from "./resources.ts";
import { keyPrefix, selectors, type Target } from "./rest.ts";
import { gone } from "./status.ts";
import { TooOldError, type Store } from "./store.ts";

export interface WatchOpts {
  bookmarkIntervalMs: number;
  /** Registered so the server can end every watch when it stops. */
  track(close: () => void): () => void;
}

export async function serveWatch(store: Store, t: Target, q: URLSearchParams, res: ServerResponse, opts: WatchOpts): Promise<void> {
  const match = selectors(q);
  const byName = (o: any) => !t.name || o.metadata?.name === t.name;
  const prefix = keyPrefix(t.def, t.def.namespaced && t.ns ? t.ns : undefined);
  const rvParam = q.get("resourceVersion");
  const send = (type: string, object: unknown) => !res.writableEnded && res.write(JSON.stringify({ type, object }) + "\n");
  let after: number;
  const initial: unknown[] = [];
  if (!rvParam || rvParam === "0") {
    const listed = await store.list(prefix);
    initial.push(...listed.items.filter((o) => match(o) && byName(o)));
    after = listed.revision;
  } else {
    after = Number(rvParam);
  }
  let complete = after;
  let stopWatch: () => void = () => {};
  const timers: ReturnType<typeof setTimeout>[] = [];
  let untrack = () => {};
  const close = () => {
    stopWatch();
    untrack();
    for (const tm of timers) clearTimeout(tm);
    if (!res.writableEnded) res.end();
  };
  const head = () => res.headersSent || res.writeHead(200, { "content-type": "application/json", "transfer-encoding": "chunked" });
  // etcd may accept the watch and cancel it right after (compacted): either way the client gets one ERROR event.
  const expired = (e: TooOldError) => {
    head();
    send("ERROR", gone(e.message).body());
    close();
  };
  try {
    stopWatch = await store.watch(
      prefix,
      after,
      (c) => {
        complete = c.revision;
        if (match(c.object) && byName(c.object)) send(c.type, c.object);
      },
      (err) => (err instanceof TooOldError ? expired(err) : close()),
    );
  } catch (e) {
    if (!(e instanceof TooOldError)) throw e;
    return expired(e);
  }
  if (res.writableEnded) return;
  head();
  for (const o of initial) send("ADDED", o);
  if (q.get("allowWatchBookmarks") === "true") {
    timers.push(
      setInterval(
        () => send("BOOKMARK", { kind: t.def.kind, apiVersion: apiVersionOf(t.def), metadata: { resourceVersion: String(complete) } }),
        opts.bookmarkIntervalMs,
      ),
    );
  }
  untrack = opts.track(close);
  const timeoutS = Number(q.get("timeoutSeconds") ?? 0);
  if (timeoutS > 0) timers.push(setTimeout(close, timeoutS * 1000));
  res.on("close", close);
}
