import { describe, expect, test } from "bun:test";
import { applyDefaults } from "../../src/config/defaults.ts";
import type { KubeletConfigurationInput } from "../../src/config/kubelet-config.ts";

// Go defaulting: non-pointer zero values count as unset; pointer fields keep an explicit zero.
describe("applyDefaults mirrors SetDefaults_KubeletConfiguration", () => {
  test.each<[string, KubeletConfigurationInput, string, unknown]>([
    ["port 0 is unset", { port: 0 }, "port", 10250],
    ["maxPods 0 is unset", { maxPods: 0 }, "maxPods", 110],
    ["nodeLeaseDurationSeconds 0 is unset", { nodeLeaseDurationSeconds: 0 }, "nodeLeaseDurationSeconds", 40],
    ["healthzPort 0 (pointer) disables", { healthzPort: 0 }, "healthzPort", 0],
    ["imageGCHighThresholdPercent 0 (pointer) is kept", { imageGCHighThresholdPercent: 0 }, "imageGCHighThresholdPercent", 0],
    ["negative podPidsLimit becomes -1", { podPidsLimit: -5 }, "podPidsLimit", -1],
    ["podPidsLimit kept", { podPidsLimit: 4096 }, "podPidsLimit", 4096],
    ['address "" is unset', { address: "" }, "address", "0.0.0.0"],
    ['containerRuntimeEndpoint "" is unset', { containerRuntimeEndpoint: "" }, "containerRuntimeEndpoint", "unix:///run/containerd/containerd.sock"],
    ["syncFrequency 0s is unset", { syncFrequency: "0s" }, "syncFrequency", "1m0s"],
    ["syncFrequency canonical", { syncFrequency: "120s" }, "syncFrequency", "2m0s"],
    ["report frequency follows an explicit update frequency", { nodeStatusUpdateFrequency: "15s" }, "nodeStatusReportFrequency", "15s"],
    ["explicit report frequency wins", { nodeStatusUpdateFrequency: "15s", nodeStatusReportFrequency: "1m" }, "nodeStatusReportFrequency", "1m0s"],
    ["parallel pulls turn serial pulls off", { maxParallelImagePulls: 3 }, "serializeImagePulls", false],
    ["one parallel pull keeps serial pulls", { maxParallelImagePulls: 1 }, "serializeImagePulls", true],
    ["evictionHard {} is set (no defaults)", { evictionHard: {} }, "evictionHard", {}],
    ["enforceNodeAllocatable [] is kept", { enforceNodeAllocatable: [] }, "enforceNodeAllocatable", []],
    ["cgroupDriver kept", { cgroupDriver: "systemd" }, "cgroupDriver", "systemd"],
    [
      "logging flushFrequency 0 → 5s",
      { logging: { flushFrequency: 0 } },
      "logging",
      { format: "text", flushFrequency: "5s", verbosity: 0, options: { text: { infoBufferSize: "0" }, json: { infoBufferSize: "0" } } },
    ],
    [
      "nested webhook TTL 0s is unset",
      { authentication: { webhook: { cacheTTL: "0s" } } },
      "authentication",
      { x509: {}, webhook: { enabled: true, cacheTTL: "2m0s" }, anonymous: { enabled: false } },
    ],
  ])("%s", (_name, input, field, want) => {
    expect((applyDefaults(input) as unknown as Record<string, unknown>)[field]).toEqual(want);
  });

  test("does not mutate its input and puts apiVersion/kind first", () => {
    const input: KubeletConfigurationInput = { evictionHard: { "memory.available": "1Gi" } };
    const out = applyDefaults(input);
    out.evictionHard["nodefs.available"] = "5%";
    expect(input.evictionHard).toEqual({ "memory.available": "1Gi" });
    expect(Object.keys(out).slice(0, 2)).toEqual(["apiVersion", "kind"]);
  });
});
