import { describe, expect, test } from "bun:test";
import type { ContainerStatus } from "../../../src/cri/types.ts";
import { CONTAINER_HASH_LABEL, CONTAINER_NAME_LABEL } from "../../../src/pod/kuberuntime/labels.ts";
import { toRuntimeContainerStatus, toRuntimeSandboxStatus } from "../../../src/pod/kuberuntime/status.ts";

function cri(extra: Partial<ContainerStatus>): ContainerStatus {
  return {
    id: "c1",
    metadata: { name: "app", attempt: 3 },
    state: "CONTAINER_EXITED",
    createdAt: 1_700_000_000_000_000_000,
    startedAt: 1_700_000_001_000_000_000,
    finishedAt: 1_700_000_002_500_000_000,
    exitCode: 0,
    image: { image: "busybox" },
    imageRef: "sha256:abc",
    reason: "",
    message: "",
    labels: { [CONTAINER_NAME_LABEL]: "app" },
    annotations: { [CONTAINER_HASH_LABEL]: "beef" },
    mounts: [],
    logPath: "",
    resources: null,
    imageId: "",
    ...extra,
  };
}

describe("toRuntimeContainerStatus", () => {
  test.each([
    ["OOMKilled from the runtime", { exitCode: 137, reason: "OOMKilled" }, "OOMKilled", 137],
    ["empty reason, exit 0", { exitCode: 0 }, "Completed", 0],
    ["empty reason, exit 3", { exitCode: 3 }, "Error", 3],
  ] as const)("%s", (_n, extra, reason, exitCode) => {
    const s = toRuntimeContainerStatus(cri(extra));
    expect(s.reason).toBe(reason);
    expect(s.exitCode).toBe(exitCode);
  });

  test("times become epoch ms; attempt and hash come back", () => {
    const s = toRuntimeContainerStatus(cri({}));
    expect(s).toMatchObject({ id: "c1", name: "app", state: "exited", attempt: 3, hash: "beef", imageRef: "sha256:abc" });
    expect(s.startedAtMs).toBe(1_700_000_001_000);
    expect(s.finishedAtMs).toBe(1_700_000_002_500);
  });

  test("a running container has no exit code or reason", () => {
    const s = toRuntimeContainerStatus(cri({ state: "CONTAINER_RUNNING", finishedAt: 0 }));
    expect(s.state).toBe("running");
    expect(s.exitCode).toBeUndefined();
    expect(s.reason).toBeUndefined();
    expect(s.finishedAtMs).toBe(0);
  });
});

test("toRuntimeSandboxStatus keeps the IP of a pod-network sandbox", () => {
  expect(
    toRuntimeSandboxStatus({
      id: "s",
      metadata: { name: "p", uid: "u", namespace: "n", attempt: 1 },
      state: "SANDBOX_READY",
      createdAt: 2_000_000,
      network: { ip: "10.89.0.5", additionalIps: [] },
      labels: {},
      annotations: {},
      runtimeHandler: "",
    }),
  ).toEqual({ id: "s", attempt: 1, state: "ready", createdAtMs: 2, ip: "10.89.0.5" });
});
