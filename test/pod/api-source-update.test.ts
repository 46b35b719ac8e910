// The API source and a pod update bunlet cannot decode: a new pod with an unsupported value becomes the
// stand-in admission rejects; an update of a running pod that no longer decodes keeps the pod as it was
// (its containers, so their hashes, unchanged: nothing restarts) with the update's metadata, so labels,
// annotations and a deletion still reach the pod.
import { expect, test } from "bun:test";
import { realClock } from "../../src/clock.ts";
import type { KubeClient } from "../../src/kube/index.ts";
import { UNSUPPORTED_SPEC_ANNOTATION } from "../../src/pod/admit-unsupported.ts";
import { createApiSource } from "../../src/pod/sources/api.ts";
import type { PodUpdate } from "../../src/pod/sources/update.ts";
import type { Pod } from "../../src/pod/types.ts";

const apiPod = (uid: string, rv: string, spec: object = {}, metadata: object = {}) => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name: `p-${uid}`, namespace: "ns", uid, resourceVersion: rv, ...metadata },
  spec: { nodeName: "n", containers: [{ name: "app", image: "busybox:1", command: ["sleep", "1h"] }], ...spec },
});

/** The source over a client listing `items`, then sending `events` on its watch; the last set of pods sent. */
async function through(items: object[], events: { type: string; object: object }[]): Promise<Pod[]> {
  const client = {
    request: async () => ({ metadata: { resourceVersion: "1" }, items }),
    stream: async (o: { signal?: AbortSignal }) =>
      new Response(
        new ReadableStream({
          start(c) {
            for (const ev of events) c.enqueue(new TextEncoder().encode(`${JSON.stringify(ev)}\n`));
            o.signal?.addEventListener("abort", () => c.close());
          },
        }),
      ),
  } as unknown as KubeClient;
  const updates: PodUpdate[] = [];
  const src = createApiSource({ client, nodeName: "n", clock: realClock, onUpdate: (u) => void updates.push(u) });
  src.start();
  for (let i = 0; i < 200 && src.resourceVersion() !== String(1 + events.length); i++) await Bun.sleep(5);
  src.stop();
  return updates.at(-1)!.pods;
}

test("an update that no longer decodes: the pod as it was, with the update's labels, annotations and deletion", async () => {
  const before = apiPod("a", "1");
  const unsupported = { resources: { limits: { cpu: "2" } }, containers: [{ name: "app", image: "busybox:2" }] };
  const pods = await through(
    [before],
    [
      { type: "MODIFIED", object: apiPod("a", "2", unsupported, { labels: { tier: "edge" } }) },
      {
        type: "MODIFIED",
        object: apiPod("a", "3", unsupported, { labels: { tier: "edge" }, deletionTimestamp: "2030-01-01T00:00:00Z", deletionGracePeriodSeconds: 5 }),
      },
    ],
  );
  const [p] = pods;
  expect(p!.spec.containers).toEqual([expect.objectContaining({ name: "app", image: "busybox:1", command: ["sleep", "1h"] })]);
  expect(p!.spec.resources).toBeUndefined();
  expect(p!.metadata.labels).toEqual({ tier: "edge" });
  expect(p!.metadata.annotations?.[UNSUPPORTED_SPEC_ANNOTATION]).toBeUndefined();
  expect(p!.metadata).toMatchObject({ deletionTimestamp: "2030-01-01T00:00:00Z", deletionGracePeriodSeconds: 5 });
});

test("a new pod that does not decode: the stand-in admission rejects, naming the field", async () => {
  const pods = await through([], [{ type: "ADDED", object: apiPod("b", "2", { resources: { limits: { cpu: "2" } } }) }]);
  expect(pods[0]!.metadata.annotations?.[UNSUPPORTED_SPEC_ANNOTATION]).toContain("spec.resources");
});

test("an update that decodes replaces the pod", async () => {
  const pods = await through([apiPod("c", "1")], [{ type: "MODIFIED", object: apiPod("c", "2", { containers: [{ name: "app", image: "busybox:2" }] }) }]);
  expect(pods[0]!.spec.containers[0]!.image).toBe("busybox:2");
});
