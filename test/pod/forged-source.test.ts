// An API pod that carries kubernetes.io/config.source itself: the config mux stamps the source it
// really came through (upstream pkg/kubelet/config/config.go podStorage.updatePods), so a forged
// "file" makes no tenant pod static — it is admitted, ranked, preempted and evicted like any API pod.
import { describe, expect, test } from "bun:test";
import { admitPod } from "../../src/eviction/admission.ts";
import { exemptFromEviction } from "../../src/eviction/policy.ts";
import { generalPredicates } from "../../src/pod/admit-predicate.ts";
import { isCriticalPod, isStaticPod } from "../../src/pod/pod-like.ts";
import { criticalPodAdmissionHandler } from "../../src/pod/preemption-handler.ts";
import { preemptable } from "../../src/pod/preemption.ts";
import { createPodConfig } from "../../src/pod/sources/config-mux.ts";
import type { PodUpdate } from "../../src/pod/sources/update.ts";
import { ConfigSourceAnnotationKey } from "../../src/pod/static-pod.ts";
import type { Pod } from "../../src/pod/types.ts";
import { createSettlingClock } from "../support/settling-clock.ts";
import { makePod } from "./fake-runtime.ts";

function throughMux(source: string, pods: Pod[]): Pod[] {
  const out: PodUpdate[] = [];
  const mux = createPodConfig({ clock: createSettlingClock(), onUpdate: (u) => out.push(u) });
  mux.merge(source, { op: "SET", pods });
  return out.flatMap((u) => u.pods);
}

const forged = (name: string, source = "file") => makePod({ name, annotations: { [ConfigSourceAnnotationKey]: source } });
const node = { name: "n", labels: {}, taints: [{ key: "k", value: "v", effect: "NoExecute" }], allocatable: { pods: "1", cpu: "1", memory: "1Gi" } };

describe("a forged kubernetes.io/config.source on an API pod", () => {
  test.each(["file", "http", "", "FILE", "api "])("config.source=%p is overwritten with api", (source) => {
    const [pod] = throughMux("api", [forged("t", source)]);
    expect(pod!.metadata.annotations?.[ConfigSourceAnnotationKey]).toBe("api");
    expect(isStaticPod(pod!)).toBe(false);
    expect(isCriticalPod(pod!)).toBe(false);
  });

  test("an UPDATE that adds the annotation later is stamped too", () => {
    const out: PodUpdate[] = [];
    const mux = createPodConfig({ clock: createSettlingClock(), onUpdate: (u) => out.push(u) });
    mux.merge("api", { op: "SET", pods: [makePod({ name: "t" })] });
    mux.merge("api", { op: "SET", pods: [forged("t")] });
    expect(mux.pods().map((p) => p.metadata.annotations?.[ConfigSourceAnnotationKey])).toEqual(["api"]);
    expect(out.flatMap((u) => u.pods).every((p) => !isStaticPod(p))).toBe(true);
  });

  test("it is refused at admission under MemoryPressure (BestEffort), like any API pod", () => {
    const [pod] = throughMux("api", [forged("t")]);
    expect(admitPod(pod!, ["MemoryPressure"]).admit).toBe(false);
    expect(admitPod(pod!, ["DiskPressure"]).admit).toBe(false);
  });

  test("an untolerated NoExecute taint refuses it", () => {
    const [pod] = throughMux("api", [forged("t")]);
    expect(generalPredicates(pod!, [], node).map((f) => f.reason)).toContain("TaintToleration");
  });

  test("it preempts nobody at admission and stays evictable", () => {
    const [pod, other] = throughMux("api", [forged("t"), makePod({ name: "victim" })]);
    expect(preemptable(pod!, other!)).toBe(false);
    const handler = criticalPodAdmissionHandler({ killPod: () => Promise.reject(new Error("must not preempt")) });
    const failures = [{ admit: false as const, reason: "OutOfpods", message: "", insufficient: { resourceName: "pods", requested: 1, used: 1, capacity: 1 } }];
    expect(handler(pod!, failures, [other!]).failures).toEqual(failures);
    expect(exemptFromEviction(pod!, false)).toBe(false);
  });

  test("a real file pod stays static and critical", () => {
    const [pod] = throughMux("file", [makePod({ name: "s" })]);
    expect(isStaticPod(pod!)).toBe(true);
    expect(exemptFromEviction(pod!, false)).toBe(true);
  });
});
