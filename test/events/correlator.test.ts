import { describe, expect, test } from "bun:test";
import { AGGREGATE_PREFIX, createEventCorrelator, eventKey, spamKey } from "../../src/events/correlator.ts";
import type { CoreEvent } from "../../src/events/types.ts";

function ev(over: Partial<CoreEvent> & { name?: string } = {}): CoreEvent {
  const { name = "p1", ...rest } = over;
  return {
    metadata: { name: `${name}.1`, namespace: "default" },
    involvedObject: { kind: "Pod", namespace: "default", name, uid: `uid-${name}`, apiVersion: "v1" },
    reason: "Pulled",
    message: 'Container image "busybox" already present on machine',
    source: { component: "kubelet", host: "n1" },
    firstTimestamp: "2026-01-01T00:00:00Z",
    lastTimestamp: "2026-01-01T00:00:00Z",
    count: 1,
    type: "Normal",
    eventTime: null,
    reportingComponent: "kubelet",
    reportingInstance: "n1",
    ...rest,
  };
}

describe("event correlator (client-go events_cache defaults)", () => {
  test("a repeated event is counted: same name and first timestamp, PATCH of count/lastTimestamp/message", () => {
    let now = 0;
    const c = createEventCorrelator({ now: () => now });
    const first = c.correlate(ev());
    expect(first).toMatchObject({ skip: false, patch: undefined });
    expect(first.event!.count).toBe(1);
    now = 5_000;
    const second = c.correlate(ev({ metadata: { name: "p1.2", namespace: "default" }, lastTimestamp: "2026-01-01T00:00:05Z" }));
    expect(second.event!.metadata.name).toBe("p1.1");
    expect(second.event!.count).toBe(2);
    expect(second.event!.firstTimestamp).toBe("2026-01-01T00:00:00Z");
    expect(second.patch).toEqual({ count: 2, lastTimestamp: "2026-01-01T00:00:05Z", message: second.event!.message });
  });

  test("the server's copy (updateState) supplies the resourceVersion of the next patch", () => {
    const c = createEventCorrelator({ now: () => 0 });
    const r = c.correlate(ev());
    c.updateState({ ...r.event!, metadata: { ...r.event!.metadata, resourceVersion: "42" } });
    expect(c.correlate(ev()).event!.metadata.resourceVersion).toBe("42");
  });

  test("the 10th distinct message for one object and reason within 10 min is combined", () => {
    let now = 0;
    const c = createEventCorrelator({ now: () => now });
    const out = Array.from({ length: 12 }, (_, i) => c.correlate(ev({ reason: "Unhealthy", message: `Liveness probe failed: try ${i}` })).event!);
    expect(out.slice(0, 9).every((e) => !e.message.startsWith(AGGREGATE_PREFIX))).toBe(true);
    expect(out[9]!.message).toBe(`${AGGREGATE_PREFIX}Liveness probe failed: try 9`);
    expect(out[9]!.count).toBe(1);
    // Later ones update the combined event: its count grows, its name stays.
    expect(out[10]!.message).toBe(`${AGGREGATE_PREFIX}Liveness probe failed: try 10`);
    expect(out[10]!.count).toBe(2);
    expect(out[11]!.count).toBe(3);
    expect(out[11]!.metadata.name).toBe(out[9]!.metadata.name);
    // Another reason of the same object is not combined.
    expect(c.correlate(ev({ reason: "Killing", message: "Stopping container c" })).event!.message).toBe("Stopping container c");
    // After 10 min without one, aggregation starts over.
    now = 601_000;
    expect(c.correlate(ev({ reason: "Unhealthy", message: "Liveness probe failed: later" })).event!.message).toBe("Liveness probe failed: later");
  });

  test("spam filter: 25 events per object at once, then one per 5 minutes", () => {
    let now = 0;
    const c = createEventCorrelator({ now: () => now });
    const results = Array.from({ length: 30 }, (_, i) => c.correlate(ev({ reason: `R${i}`, message: "m" })));
    expect(results.filter((r) => !r.skip).length).toBe(25);
    // Another object has its own bucket.
    expect(c.correlate(ev({ name: "p2" })).skip).toBe(false);
    now = 299_000;
    expect(c.correlate(ev({ reason: "X" })).skip).toBe(true);
    now = 300_000;
    expect(c.correlate(ev({ reason: "Y" })).skip).toBe(false);
    expect(c.correlate(ev({ reason: "Z" })).skip).toBe(true);
  });

  test.each([
    ["message", { message: "other" }, true, false],
    ["reason", { reason: "Other" }, true, false],
    ["type", { type: "Warning" as const }, true, true],
  ])("keys: a different %s is another event", (_what, over, eventDiffers, spamDiffers) => {
    expect(eventKey(ev(over)) !== eventKey(ev())).toBe(eventDiffers);
    expect(spamKey(ev(over)) !== spamKey(ev())).toBe(spamDiffers);
  });
});
