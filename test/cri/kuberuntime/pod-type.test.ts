// PODS' parsed Pod must be usable by kuberuntime as it is (compile-time check + one real manifest).
import { expect, test } from "bun:test";
import { generateContainerConfig, generatePodSandboxConfig } from "../../../src/pod/kuberuntime/config.ts";
import type { KubePod } from "../../../src/pod/kuberuntime/types.ts";
import { type Pod, podSchema } from "../../../src/pod/types.ts";

export const asKube = (pod: Pod): KubePod => pod;

test("a parsed v1 Pod drives sandbox and container config", () => {
  const pod = podSchema.parse({
    metadata: { name: "web", namespace: "default", uid: "u1" },
    spec: {
      hostNetwork: true,
      containers: [{ name: "app", image: "bunlet.local/busybox:1", command: ["sleep", "1"], resources: { limits: { memory: "64Mi" } } }],
    },
  });
  const kube = asKube(pod);
  const ref = { name: "web", namespace: "default", uid: "u1" };
  const inputs = { podLogsDir: "/var/log/pods", memoryCapacityBytes: 1 << 30, volumeHostPath: () => undefined };
  expect(generatePodSandboxConfig(kube, ref, 0, inputs).linux?.securityContext?.namespaceOptions?.network).toBe("NODE");
  const c = generateContainerConfig(kube, ref, kube.spec.containers[0] as KubePod["spec"]["containers"][number], 0, inputs);
  expect(c.linux?.resources?.memoryLimitInBytes).toBe(64 * 1024 * 1024);
});
