import { describe, expect, test } from "bun:test";
import type { ContainerConfig } from "../../../src/cri/types.ts";
import { withDeviceRunOptions } from "../../../src/pod/kuberuntime/device-options.ts";

const config: ContainerConfig = {
  metadata: { name: "app", attempt: 0 },
  image: { image: "busybox" },
  envs: [{ key: "A", value: "pod" }],
  mounts: [{ containerPath: "/data", hostPath: "/var/lib/x" }],
  annotations: { "io.kubernetes.container.hash": "1" },
};

describe("device run options in the CRI container config", () => {
  test("none: the config as it was", () => {
    expect(withDeviceRunOptions(config, undefined)).toBe(config);
    expect(withDeviceRunOptions(config, { envs: [], mounts: [], devices: [], annotations: [], cdiDevices: [] })).toBe(config);
  });
  test("the devices' envs and mounts first, device nodes, CDI devices, annotations under the kubelet's", () => {
    const c = withDeviceRunOptions(config, {
      envs: [{ key: "A", value: "device" }],
      mounts: [{ containerPath: "/tmp/Dev-1", hostPath: "/tmp/Dev-1", readonly: false }],
      devices: [{ containerPath: "/dev/fake0", hostPath: "/dev/null", permissions: "rw" }],
      annotations: [
        { key: "io.kubernetes.container.hash", value: "device" },
        { key: "vendor", value: "x" },
      ],
      cdiDevices: [{ name: "example.com/resource=CDI-Dev-1" }],
    });
    expect(c.envs).toEqual([
      { key: "A", value: "device" },
      { key: "A", value: "pod" }, // the runtime keeps the last: the pod's own
    ]);
    expect(c.mounts?.map((m) => m.containerPath)).toEqual(["/tmp/Dev-1", "/data"]);
    expect(c.devices).toEqual([{ containerPath: "/dev/fake0", hostPath: "/dev/null", permissions: "rw" }]);
    expect(c.CDIDevices).toEqual([{ name: "example.com/resource=CDI-Dev-1" }]);
    expect(c.annotations).toEqual({ "io.kubernetes.container.hash": "1", vendor: "x" });
  });
});
