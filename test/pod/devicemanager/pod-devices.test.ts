import { describe, expect, test } from "bun:test";
import { createPodDevices, deviceRunContainerOptions, devicesPerNuma } from "../../../src/pod/devicemanager/pod-devices.ts";
import type { ContainerAllocateResponse } from "../../../src/pod/devicemanager/types.ts";

const resp = (o: Partial<ContainerAllocateResponse>): ContainerAllocateResponse => ({
  envs: {},
  mounts: [],
  devices: [],
  annotations: {},
  cdiDevices: [],
  ...o,
});

describe("pod devices", () => {
  test("assignments by pod, container and resource; the devices in use; freeing a pod", () => {
    const pd = createPodDevices();
    pd.insert("p1", "a", "x.io/r", { deviceIds: new Map([[-1, ["d1"]]]), allocResp: resp({}) });
    pd.insert("p2", "b", "x.io/r", { deviceIds: new Map([[0, ["d2", "d3"]]]), allocResp: resp({}) });
    expect([...(pd.containerDevices("p2", "b", "x.io/r") ?? [])]).toEqual(["d2", "d3"]);
    expect(pd.containerDevices("p2", "a", "x.io/r")).toBeUndefined();
    expect([...(pd.devices().get("x.io/r") ?? [])].sort()).toEqual(["d1", "d2", "d3"]);
    pd.delete(["p1"]);
    expect([...pd.pods()]).toEqual(["p2"]);
    expect(pd.entries()).toHaveLength(1);
  });

  test("devices by NUMA node; without topology under -1", () => {
    const topo: Record<string, { ID: number }[]> = { d1: [{ ID: 0 }], d2: [{ ID: 1 }] };
    expect([...devicesPerNuma(["d1", "d2", "d3"], (id) => topo[id])]).toEqual([
      [0, ["d1"]],
      [1, ["d2"]],
      [-1, ["d3"]],
    ]);
  });

  test("run options: the first setting of an env, device, mount or annotation wins; CDI devices once each", () => {
    const o = deviceRunContainerOptions([
      resp({
        envs: { A: "1" },
        mounts: [{ containerPath: "/dev/a", hostPath: "/tmp/a", readOnly: true }],
        devices: [{ containerPath: "/dev/x", hostPath: "/dev/x0", permissions: "rw" }],
        annotations: { k: "v" },
        cdiDevices: [{ name: "vendor.com/dev=a" }],
      }),
      resp({
        envs: { A: "2", B: "3" },
        mounts: [{ containerPath: "/dev/a", hostPath: "/tmp/other", readOnly: false }],
        devices: [{ containerPath: "/dev/x", hostPath: "/dev/x1", permissions: "r" }],
        annotations: { k: "w" },
        cdiDevices: [{ name: "vendor.com/dev=a" }, { name: "vendor.com/dev=b" }],
      }),
    ]);
    expect(o).toEqual({
      envs: [
        { key: "A", value: "1" },
        { key: "B", value: "3" },
      ],
      mounts: [{ containerPath: "/dev/a", hostPath: "/tmp/a", readonly: true }],
      devices: [{ containerPath: "/dev/x", hostPath: "/dev/x0", permissions: "rw" }],
      annotations: [{ key: "k", value: "v" }],
      cdiDevices: [{ name: "vendor.com/dev=a" }, { name: "vendor.com/dev=b" }],
    });
  });
});
