// Reading a watch stream (client-go's watch.StreamWatcher over the JSON framer): one
// {"type", "object"} per line; an ERROR event carries a Status (410 Expired → the caller relists).
import { parseJsonRedacted } from "../json-redacted.ts";
import { ApiError } from "./errors.ts";
import type { KubeClient } from "./client.ts";

export interface WatchEvent<T = any> {
  type: "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR";
  object: T;
}

/** Yields the events of one watch request until the server ends it or the signal aborts. */
export async function* watchEvents(
  client: KubeClient,
  path: string,
  query: Record<string, string | undefined>,
  signal?: AbortSignal,
): AsyncGenerator<WatchEvent> {
  const res = await client.stream({ path, query: { ...query, watch: "true" }, signal });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buf = "";
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buf += decoder.decode(value, { stream: true });
      for (let i = buf.indexOf("\n"); i >= 0; i = buf.indexOf("\n")) {
        const line = buf.slice(0, i).trim();
        buf = buf.slice(i + 1);
        if (!line) continue;
        const ev = parseJsonRedacted(line, `watch event of ${path}`) as WatchEvent;
        if (ev.type === "ERROR") {
          const s = ev.object ?? {};
          throw new ApiError(s.code ?? 500, s.reason ?? "InternalError", s.message ?? "watch error", "GET", path);
        }
        yield ev;
      }
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}
