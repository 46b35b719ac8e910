import { describe, expect, test } from "bun:test";
import { evictionMessage, formatAmount, withFreshContainerMemory } from "../../src/eviction/message.ts";
import { makeSignalObservations } from "../../src/eviction/observations.ts";
import { Gi, Mi, pod, podStats, summary, thresholds } from "./helpers.ts";

describe("evictionMessage", () => {
  test("upstream example: ephemeral-storage with threshold and container clause", () => {
    const p = pod("p", { containers: [{ name: "above-requests", resources: { requests: { "ephemeral-storage": "100Mi" } } }] });
    const ts = thresholds({ evictionHard: { "nodefs.available": "2Gi" } });
    const obs = makeSignalObservations(summary({ fsAvailable: 1536 * Mi, fsCapacity: 10 * Gi })).observations;
    const { message, annotations } = evictionMessage(
      "ephemeral-storage",
      p,
      podStats(p, { rootfs: 600 * Mi, logs: 100 * Mi, container: "above-requests" }),
      ts,
      obs,
    );
    expect(message).toBe(
      "The node was low on resource: ephemeral-storage. Threshold quantity: 2Gi, available: 1536Mi. Container above-requests was using 700Mi, request is 100Mi, has larger consumption of ephemeral-storage. ",
    );
    expect(annotations).toEqual({ offending_containers: "above-requests", offending_containers_usage: "700Mi", starved_resource: "ephemeral-storage" });
  });
  test("memory: working set vs request, percentage threshold printed as truncated bytes", () => {
    const p = pod("p", { containers: [{ name: "a", resources: { requests: { memory: "100Mi" } } }] });
    const ts = thresholds({ evictionHard: { "memory.available": "20%" }, enforceNodeAllocatable: [] });
    const obs = makeSignalObservations(summary({ memAvailable: 100 * Mi, memWorkingSet: 900 * Mi })).observations;
    const { message } = evictionMessage("memory", p, podStats(p, { memory: 300 * Mi, container: "a" }), ts, obs);
    expect(message).toBe(
      "The node was low on resource: memory. Threshold quantity: 209715203, available: 100Mi. Container a was using 300Mi, request is 100Mi, has larger consumption of memory. ",
    );
  });
  test("no request prints 0; under-request containers are not blamed", () => {
    const p = pod("p", { containers: [{ name: "a" }, { name: "b", resources: { requests: { memory: "1Gi" } } }] });
    const s = podStats(p, { memory: 10 * Mi, container: "a" });
    s.containers!.push({ name: "b", memory: { time: "", workingSetBytes: 10 * Mi } });
    const { message, annotations } = evictionMessage("memory", p, s, [], {});
    expect(message).toBe("The node was low on resource: memory. Container a was using 10Mi, request is 0, has larger consumption of memory. ");
    expect(annotations.offending_containers).toBe("a");
  });
  test("inodes and pids never get container clauses; counts print as decimal", () => {
    const p = pod("p");
    const ts = thresholds({ evictionHard: { "pid.available": "1k" } });
    const obs = makeSignalObservations(summary({ maxpid: 4096, curproc: 3096 })).observations;
    const { message, annotations } = evictionMessage("pids", p, podStats(p, { memory: 10 * Mi }), ts, obs);
    expect(message).toBe("The node was low on resource: pids. Threshold quantity: 1k, available: 1k. ");
    expect(annotations).toEqual({ offending_containers: "", offending_containers_usage: "", starved_resource: "pids" });
  });
  test("no stats: only the node sentences, no annotations", () => {
    expect(evictionMessage("memory", pod("p"), undefined, [], {})).toEqual({ message: "The node was low on resource: memory. ", annotations: {} });
  });
  test.each([
    [1.5 * Gi, false, "1536Mi"],
    [1500 * Mi, false, "1500Mi"],
    [209715203, false, "209715203"],
    [1000, true, "1k"],
    [1200, true, "1200"],
    [1000, false, "1k"],
  ])("formatAmount(%d, count=%p) = %s", (n, count, s) => expect(formatAmount(n, count)).toBe(s));
});

describe("withFreshContainerMemory: a memory eviction's container figures as read at eviction time", () => {
  const p = pod("p", { containers: [{ name: "a" }, { name: "b" }] });
  const old = () => {
    const s = podStats(p, { memory: 10 * Mi, rootfs: 5 * Mi, logs: 1 * Mi, container: "a" });
    s.containers!.push({ name: "b", memory: { time: "t0", workingSetBytes: 20 * Mi } });
    return s;
  };
  const fresh = [{ name: "a", memory: { time: "t1", workingSetBytes: 900 * Mi } }, { name: "b" }];
  test("fresh memory replaces the summary's; a container read without a figure keeps the summary's; other fields kept", () => {
    const s = withFreshContainerMemory("memory", p, old(), fresh)!;
    expect(s.containers!.map((c) => [c.name, c.memory?.workingSetBytes])).toEqual([
      ["a", 900 * Mi],
      ["b", 20 * Mi],
    ]);
    expect(s.containers![0]!.rootfs?.usedBytes).toBe(5 * Mi);
    expect(s.memory?.workingSetBytes).toBe(10 * Mi);
  });
  test("a pod the summary did not know yet gets the figures read now", () => {
    const s = withFreshContainerMemory("memory", p, undefined, fresh)!;
    expect(s.podRef).toEqual({ name: "p", namespace: "default", uid: p.metadata.uid! });
    expect(evictionMessage("memory", p, s, [], {}).message).toBe(
      "The node was low on resource: memory. Container a was using 900Mi, request is 0, has larger consumption of memory. ",
    );
  });
  test("a container the fresh read missed keeps the summary's figure instead of leaving the message", () => {
    const s = withFreshContainerMemory("memory", p, old(), [{ name: "a", memory: { time: "t1", workingSetBytes: 900 * Mi } }])!;
    expect(s.containers!.map((c) => [c.name, c.memory?.workingSetBytes])).toEqual([
      ["a", 900 * Mi],
      ["b", 20 * Mi],
    ]);
  });
  test("other resources, or nothing read: the summary's stats as they are", () => {
    const s = old();
    expect(withFreshContainerMemory("ephemeral-storage", p, s, fresh)).toBe(s);
    expect(withFreshContainerMemory("memory", p, s, undefined)).toBe(s);
    expect(withFreshContainerMemory("memory", p, undefined, undefined)).toBeUndefined();
  });
});
