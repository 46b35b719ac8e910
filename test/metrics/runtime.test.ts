import { describe, expect, test } from "bun:test";
import type { ContainerConfig, CriClient } from "../../src/cri/client.ts";
import { GrpcCode, GrpcError } from "../../src/cri/client.ts";
import { CRI_OPERATION_TYPES, grpcCodeName, instrumentCri } from "../../src/metrics/runtime.ts";
import { createRegistry } from "../../src/server/metrics.ts";

function fakeCri(over: Partial<CriClient>): CriClient {
  return { endpoint: "unix:///fake.sock", close() {}, ...over } as CriClient;
}

const sample = (text: string, series: string) => {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
};

describe("instrumentCri", () => {
  test.each([
    ["version", "version"],
    ["runPodSandbox", "run_podsandbox"],
    ["listPodSandbox", "list_podsandbox"],
    ["createContainer", "create_container"],
    ["startContainer", "start_container"],
    ["stopContainer", "stop_container"],
    ["execSync", "exec_sync"],
    ["imageFsInfo", "image_fs_info"],
    ["reopenContainerLog", "reopen_container_log"],
  ] as const)("%s is operation_type=%s, as upstream", (method, op) => {
    expect(CRI_OPERATION_TYPES[method]).toBe(op);
  });

  test("counts, times and errors every call by operation type; results and errors pass through", async () => {
    const registry = createRegistry();
    let t = 0;
    const cri = instrumentCri(
      fakeCri({
        version: async () => ({ runtimeName: "containerd" }) as never,
        listContainers: async () => Promise.reject(new GrpcError("/runtime.v1.RuntimeService/ListContainers", GrpcCode.UNAVAILABLE, "down")),
      }),
      registry,
      {},
      () => (t += 250),
    );
    expect((await cri.version()).runtimeName).toBe("containerd");
    await expect(cri.listContainers()).rejects.toThrow("down");
    await expect(cri.listContainers()).rejects.toThrow("down");
    expect(cri.endpoint).toBe("unix:///fake.sock");
    const text = registry.render();
    expect(sample(text, 'kubelet_runtime_operations_total{operation_type="version"}')).toBe(1);
    expect(sample(text, 'kubelet_runtime_operations_total{operation_type="list_containers"}')).toBe(2);
    expect(sample(text, 'kubelet_runtime_operations_errors_total{operation_type="list_containers"}')).toBe(2);
    expect(sample(text, 'kubelet_runtime_operations_errors_total{operation_type="version"}')).toBe(0);
    // Upstream's ExponentialBuckets(.005, 2.5, 14), rendered as a Go kubelet does: 0.25 s is above 0.1953125.
    expect(sample(text, 'kubelet_runtime_operations_duration_seconds_bucket{operation_type="version",le="0.1953125"}')).toBe(0);
    expect(sample(text, 'kubelet_runtime_operations_duration_seconds_bucket{operation_type="version",le="0.48828125"}')).toBe(1);
    expect(sample(text, 'kubelet_runtime_operations_duration_seconds_sum{operation_type="version"}')).toBe(0.25);
  });

  test("started pods and containers as upstream: every attempt counts, failures by gRPC code and container type", async () => {
    const registry = createRegistry();
    let createFails = false;
    const cri = instrumentCri(
      fakeCri({
        runPodSandbox: async () => "sb1",
        createContainer: async (_sb, config) => {
          if (createFails) throw new GrpcError("/runtime.v1.RuntimeService/CreateContainer", GrpcCode.INVALID_ARGUMENT, "bad");
          return `id-${config.metadata.name}`;
        },
        startContainer: async (id) => {
          if (id === "id-init") throw new GrpcError("/runtime.v1.RuntimeService/StartContainer", GrpcCode.UNKNOWN, "runc");
        },
      }),
      registry,
      { containerType: (c) => (c.metadata.name === "init" ? "init_container" : "container") },
    );
    const cfg = (name: string) => ({ metadata: { name, attempt: 0 } }) as ContainerConfig;
    await cri.runPodSandbox({} as never);
    await cri.startContainer(await cri.createContainer("sb1", cfg("main"), {} as never));
    await expect(cri.startContainer(await cri.createContainer("sb1", cfg("init"), {} as never))).rejects.toThrow("runc");
    createFails = true;
    await expect(cri.createContainer("sb1", cfg("main"), {} as never)).rejects.toThrow("bad");
    const text = registry.render();
    expect(sample(text, "kubelet_started_pods_total")).toBe(1);
    expect(sample(text, 'kubelet_started_containers_total{container_type="container"}')).toBe(2);
    expect(sample(text, 'kubelet_started_containers_total{container_type="init_container"}')).toBe(1);
    expect(sample(text, 'kubelet_started_containers_errors_total{container_type="init_container",code="Unknown"}')).toBe(1);
    expect(sample(text, 'kubelet_started_containers_errors_total{container_type="container",code="InvalidArgument"}')).toBe(1);
    expect(sample(text, 'kubelet_run_podsandbox_duration_seconds_count{runtime_handler=""}')).toBe(1);
  });

  test.each([
    [new GrpcError("m", GrpcCode.UNAVAILABLE, ""), "Unavailable"],
    [new GrpcError("m", GrpcCode.DEADLINE_EXCEEDED, ""), "DeadlineExceeded"],
    [new GrpcError("m", 1, ""), "Canceled"],
    [new Error("plain"), "Unknown"],
  ])("grpcCodeName(%#) = %s", (e, name) => {
    expect(grpcCodeName(e)).toBe(name);
  });
});

describe("storage operations", () => {
  test("volume operations are timed by plugin, operation and status; failures count as errors and still throw", async () => {
    const { storageMetrics } = await import("../../src/metrics/storage.ts");
    const registry = createRegistry();
    const op = storageMetrics(registry);
    expect(op({ operationName: "volume_mount", volumePlugin: "kubernetes.io/empty-dir" }, () => "/dir")).toBe("/dir");
    expect(() =>
      op({ operationName: "volume_unmount", volumePlugin: "kubernetes.io/empty-dir" }, () => {
        throw new Error("busy");
      }),
    ).toThrow("busy");
    const text = registry.render();
    expect(
      sample(
        text,
        'storage_operation_duration_seconds_count{volume_plugin="kubernetes.io/empty-dir",operation_name="volume_mount",status="success",migrated="false"}',
      ),
    ).toBe(1);
    expect(
      sample(
        text,
        'storage_operation_duration_seconds_count{volume_plugin="kubernetes.io/empty-dir",operation_name="volume_unmount",status="fail-unknown",migrated="false"}',
      ),
    ).toBe(1);
    expect(sample(text, 'storage_operation_errors_total{volume_plugin="kubernetes.io/empty-dir",operation_name="volume_mount"}')).toBe(0);
    expect(sample(text, 'storage_operation_errors_total{volume_plugin="kubernetes.io/empty-dir",operation_name="volume_unmount"}')).toBe(1);
  });
});

test("the instrumented client keeps close and endpoint through a spreading decorator", () => {
  let closed = 0;
  const cri = instrumentCri(fakeCri({ close: () => void closed++ }), createRegistry());
  const decorated = { ...cri };
  expect(decorated.endpoint).toBe("unix:///fake.sock");
  decorated.close();
  expect(closed).toBe(1);
});
