// Watch streams as kube-apiserver serves them over HTTP/1.1 chunked JSON: one
// {"type":"ADDED|MODIFIED|DELETED|BOOKMARK|ERROR","object":…} line per event. Without a
// resourceVersion (or "0") the stream starts with ADDED for every current object; with one, the
// changes after it are replayed from history — or, when compaction removed them, a single ERROR
// event carrying the 410 Expired Status ("too old resource version: N (M)"), as etcd-backed
// watches end. Bookmarks (allowWatchBookmarks) carry only the current resourceVersion.
import type { ServerResponse } from "node:http";
import { apiVersionOf } from "./resources.ts";
import { keyPrefix, selectors, type Target } from "./rest.ts";
import { gone } from "./status.ts";
import { TooOldError, type Change, type Store } from "./store.ts";

export interface WatchOpts {
  bookmarkIntervalMs: number;
  /** Registered so the server can end every watch when it stops. */
  track(close: () => void): () => void;
}

export function serveWatch(store: Store, t: Target, q: URLSearchParams, res: ServerResponse, opts: WatchOpts): void {
  const match = selectors(q);
  const byName = (o: any) => !t.name || o.metadata?.name === t.name;
  const prefix = keyPrefix(t.def, t.def.namespaced && t.ns ? t.ns : undefined);
  const rvParam = q.get("resourceVersion");
  let initial: Change[];
  try {
    if (!rvParam || rvParam === "0") {
      initial = store.list(prefix).map((object) => ({ revision: 0, type: "ADDED", key: "", object }));
    } else {
      initial = store.since(prefix, Number(rvParam));
    }
  } catch (e) {
    if (!(e instanceof TooOldError)) throw e;
    res.writeHead(200, { "content-type": "application/json", "transfer-encoding": "chunked" });
    res.end(JSON.stringify({ type: "ERROR", object: gone(e.message).body() }) + "\n");
    return;
  }
  res.writeHead(200, { "content-type": "application/json", "transfer-encoding": "chunked" });
  const send = (type: string, object: unknown) => res.write(JSON.stringify({ type, object }) + "\n");
  for (const c of initial) if (match(c.object) && byName(c.object)) send(c.type, c.object);
  const unsubscribe = store.subscribe((c) => {
    if (c.key.startsWith(prefix) && match(c.object) && byName(c.object)) send(c.type, c.object);
  });
  const timers: ReturnType<typeof setTimeout>[] = [];
  if (q.get("allowWatchBookmarks") === "true") {
    const bm = setInterval(() => send("BOOKMARK", { kind: t.def.kind, apiVersion: apiVersionOf(t.def), metadata: { resourceVersion: String(store.revision()) } }), opts.bookmarkIntervalMs);
    timers.push(bm);
  }
  let untrack = () => {};
  const close = () => {
    unsubscribe();
    untrack();
    for (const tm of timers) clearTimeout(tm);
    if (!res.writableEnded) res.end();
  };
  untrack = opts.track(close);
  const timeoutS = Number(q.get("timeoutSeconds") ?? 0);
  if (timeoutS > 0) timers.push(setTimeout(close, timeoutS * 1000));
  res.on("close", close);
}
