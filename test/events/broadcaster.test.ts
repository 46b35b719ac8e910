import { describe, expect, test } from "bun:test";
import { createEventBroadcaster, type EventSink } from "../../src/events/broadcaster.ts";
import { nodeRef, podRef, type CoreEvent } from "../../src/events/types.ts";
import { ApiError } from "../../src/kube/errors.ts";
import { createManualClock } from "../../src/manual-clock.ts";

function fakeSink() {
  const stored = new Map<string, CoreEvent>();
  let rv = 0;
  const calls: string[] = [];
  let down = false;
  const sink: EventSink = {
    async create(e) {
      calls.push(`POST ${e.metadata.name}`);
      if (down) throw new TypeError("fetch failed: connection refused");
      if (stored.has(e.metadata.name)) throw new ApiError(409, "AlreadyExists", "exists", "POST", "/events");
      const s = { ...e, metadata: { ...e.metadata, resourceVersion: String(++rv) } };
      stored.set(e.metadata.name, s);
      return s;
    },
    async patch(e, p) {
      calls.push(`PATCH ${e.metadata.name} count=${p.count}`);
      if (down) throw new TypeError("fetch failed: connection refused");
      const old = stored.get(e.metadata.name);
      if (!old) throw new ApiError(404, "NotFound", "not found", "PATCH", "/events");
      const s = { ...old, ...p, metadata: { ...old.metadata, resourceVersion: String(++rv) } };
      stored.set(e.metadata.name, s);
      return s;
    },
  };
  return { sink, stored, calls, setDown: (d: boolean) => (down = d) };
}

const pod = { metadata: { name: "web", namespace: "prod", uid: "u1" } };
const flush = async () => {
  await new Promise((r) => setImmediate(r));
  await new Promise((r) => setTimeout(r, 0));
};

describe("event broadcaster", () => {
  test("makeEvent: kubelet source, namespace default for the node, count 1, reporting component", async () => {
    const clock = createManualClock(Date.parse("2026-02-03T04:05:06.789Z"));
    const b = createEventBroadcaster({ clock, component: "kubelet", host: "n1", queueForSink: true });
    const f = fakeSink();
    b.startRecordingToSink(f.sink);
    b.recorder.event(nodeRef("n1"), "Normal", "Starting", "Starting kubelet.");
    b.recorder.event(podRef(pod, "app"), "Normal", "Pulled", 'Container image "busybox" already present on machine');
    await b.whenIdle();
    const [node, p] = [...f.stored.values()];
    expect(node).toMatchObject({
      metadata: { namespace: "default" },
      involvedObject: { kind: "Node", name: "n1", uid: "n1" },
      source: { component: "kubelet", host: "n1" },
      reportingComponent: "kubelet",
      reportingInstance: "n1",
      firstTimestamp: "2026-02-03T04:05:06Z",
      count: 1,
      type: "Normal",
      reason: "Starting",
    });
    expect(node!.metadata.name).toMatch(/^n1\.[0-9a-f]+$/);
    expect(p).toMatchObject({
      metadata: { namespace: "prod" },
      involvedObject: { kind: "Pod", name: "web", uid: "u1", apiVersion: "v1", fieldPath: "spec.containers{app}" },
    });
  });

  test("the same event again is a PATCH of its count; an event deleted meanwhile is created again", async () => {
    const clock = createManualClock(0);
    const b = createEventBroadcaster({ clock, component: "kubelet", host: "n1", queueForSink: true });
    const f = fakeSink();
    b.startRecordingToSink(f.sink);
    for (let i = 0; i < 3; i++) b.recorder.event(podRef(pod), "Warning", "BackOff", "Back-off restarting failed container app in pod web_prod(u1)");
    await b.whenIdle();
    expect(f.calls.map((c) => c.split(" ")[0] + (c.includes("count") ? ` ${c.split(" ")[2]}` : ""))).toEqual(["POST", "PATCH count=2", "PATCH count=3"]);
    expect([...f.stored.values()][0]!.count).toBe(3);
    f.stored.clear();
    b.recorder.event(podRef(pod), "Warning", "BackOff", "Back-off restarting failed container app in pod web_prod(u1)");
    await b.whenIdle();
    expect(f.calls.slice(-2).map((c) => c.split(" ")[0])).toEqual(["PATCH", "POST"]);
  });

  test("API server down: record() never waits, the queue is bounded (oldest dropped), writes resume", async () => {
    const clock = createManualClock(0);
    const b = createEventBroadcaster({ clock, component: "kubelet", host: "n1", queueForSink: true, maxQueued: 5, rand: () => 1 });
    const f = fakeSink();
    f.setDown(true);
    b.startRecordingToSink(f.sink);
    b.recorder.event(nodeRef("n1"), "Normal", "R0", "first");
    await flush();
    for (let i = 1; i <= 8; i++) b.recorder.event(podRef({ metadata: { name: `p${i}`, namespace: "default", uid: `u${i}` } }), "Normal", `R${i}`, `m${i}`);
    expect(b.dropped()).toBe(3);
    f.setDown(false);
    clock.advance(10_000);
    await b.whenIdle();
    // The one being retried, then the 5 newest.
    expect([...f.stored.values()].map((e) => e.reason)).toEqual(["R0", "R4", "R5", "R6", "R7", "R8"]);
  });

  test("gives up on an event after 12 tries, 10 s apart; an API error is not retried", async () => {
    const clock = createManualClock(0);
    const b = createEventBroadcaster({ clock, component: "kubelet", host: "n1", queueForSink: true, rand: () => 0.5 });
    const f = fakeSink();
    f.setDown(true);
    b.startRecordingToSink(f.sink);
    b.recorder.event(nodeRef("n1"), "Normal", "R", "m");
    for (let i = 0; i < 20; i++) {
      await flush();
      clock.advance(10_000);
    }
    await b.whenIdle();
    expect(f.calls.length).toBe(12);
    const rejecting: EventSink = {
      create: async () => {
        throw new ApiError(403, "Forbidden", "no", "POST", "/e");
      },
      patch: async () => {
        throw new Error("unused");
      },
    };
    const b2 = createEventBroadcaster({ clock, component: "kubelet", host: "n1", queueForSink: true });
    b2.startRecordingToSink(rejecting);
    b2.recorder.event(nodeRef("n1"), "Normal", "R", "m");
    await b2.whenIdle();
  });

  test("standalone (no sink): logged only, nothing queued", () => {
    const b = createEventBroadcaster({ clock: createManualClock(0), component: "kubelet", host: "n1", queueForSink: false, maxQueued: 5 });
    for (let i = 0; i < 20; i++) b.recorder.event(nodeRef("n1"), "Normal", "R", `m${i}`);
    expect(b.dropped()).toBe(0);
  });
});
