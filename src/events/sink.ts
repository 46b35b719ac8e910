// The API event sink (client-go's typed EventSinkImpl): POST /api/v1/namespaces/<ns>/events, and a
// strategic merge PATCH of {count, lastTimestamp, message} for an event written before.
import type { KubeClient } from "../kube/client.ts";
import type { CoreEvent, EventSink } from "./types.ts";

export function apiEventSink(client: KubeClient): EventSink {
  const base = (ns: string) => `/api/v1/namespaces/${encodeURIComponent(ns)}/events`;
  return {
    create: (e) => client.request<CoreEvent>({ method: "POST", path: base(e.metadata.namespace), body: { kind: "Event", apiVersion: "v1", ...e } }),
    patch: (e, patch) =>
      client.request<CoreEvent>({
        method: "PATCH",
        path: `${base(e.metadata.namespace)}/${encodeURIComponent(e.metadata.name)}`,
        body: patch,
        contentType: "application/strategic-merge-patch+json",
      }),
  };
}
