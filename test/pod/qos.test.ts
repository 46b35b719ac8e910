import { describe, expect, test } from "bun:test";
import type { PodLike } from "../../src/pod/pod-like.ts";
import type { Pod } from "../../src/pod/types.ts";
import { computePodQOS, getPodQOS } from "../../src/pod/qos.ts";

const p = (containers: PodLike["spec"]["containers"], initContainers?: PodLike["spec"]["containers"]): PodLike => ({
  metadata: { name: "p" },
  spec: { containers, ...(initContainers ? { initContainers } : {}) },
});
const c = (requests?: Record<string, string>, limits?: Record<string, string>) => ({
  name: "c",
  resources: { ...(requests ? { requests } : {}), ...(limits ? { limits } : {}) },
});

describe("getPodQOS", () => {
  const cases: [string, PodLike, string][] = [
    ["no resources", p([{ name: "c" }]), "BestEffort"],
    ["only non-QoS resources", p([c({ "ephemeral-storage": "1Gi" })]), "BestEffort"],
    ["zero requests are ignored", p([c({ cpu: "0", memory: "0" })]), "BestEffort"],
    ["requests only", p([c({ cpu: "100m" })]), "Burstable"],
    ["limits only for cpu+memory (requests default from limits)", p([c(undefined, { cpu: "100m", memory: "1G" })]), "Guaranteed"],
    ["equal requests and limits", p([c({ cpu: "1", memory: "1Gi" }, { cpu: "1", memory: "1Gi" })]), "Guaranteed"],
    ["same value, different spelling", p([c({ cpu: "1000m", memory: "1024Mi" }, { cpu: "1", memory: "1Gi" })]), "Guaranteed"],
    ["request below limit", p([c({ cpu: "500m", memory: "1Gi" }, { cpu: "1", memory: "1Gi" })]), "Burstable"],
    ["memory limit missing", p([c({ cpu: "1" }, { cpu: "1" })]), "Burstable"],
    ["one guaranteed, one besteffort container", p([c({ cpu: "1", memory: "1Gi" }, { cpu: "1", memory: "1Gi" }), { name: "d" }]), "Burstable"],
    ["init container counts", p([c({ cpu: "1", memory: "1Gi" }, { cpu: "1", memory: "1Gi" })], [c({ cpu: "1" })]), "Burstable"],
  ];
  test.each(cases)("%s", (_n, pod, want) => expect(getPodQOS(pod)).toBe(want as never));
  test("status.qosClass wins when set; computePodQOS ignores it", () => {
    const pod = { ...p([{ name: "c" }]), status: { qosClass: "Guaranteed" } };
    expect(getPodQOS(pod)).toBe("Guaranteed");
    expect(computePodQOS(pod)).toBe("BestEffort");
  });
});

// Contract (preamble): PODS' full zod Pod type must be assignable to PodLike. Checked by tsc.
export const podIsPodLike = (p: Pod): PodLike => p;
