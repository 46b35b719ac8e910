import { expect, test } from "bun:test";
import { cgroupPaths } from "../../src/wire/pods.ts";
import { pod } from "../eviction/helpers.ts";

const be = pod("be");
const burst = pod("b", { requests: { memory: "10Mi" } });
const guar = pod("g", { requests: { cpu: "1", memory: "10Mi" }, limits: { cpu: "1", memory: "10Mi" } });

test.each([
  ["cgroupfs", "", be, "kubepods", "/kubepods/besteffort/poduid-be"],
  ["cgroupfs", "/", burst, "kubepods", "/kubepods/burstable/poduid-b"],
  ["cgroupfs", "/bunlet-demo", guar, "bunlet-demo/kubepods", "/bunlet-demo/kubepods/poduid-g"],
  ["systemd", "", be, "kubepods.slice", "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-poduid_be.slice"],
] as const)("%s root=%p: kubepods and the pod's cgroup", (driver, root, p, podsCgroup, podPath) => {
  const paths = cgroupPaths(driver, root);
  expect(paths.podsCgroup).toBe(podsCgroup);
  expect(paths.podCgroupPath(p)).toBe(podPath);
});

test("a pod without a UID has no cgroup", () => {
  expect(cgroupPaths("cgroupfs", "/").podCgroupPath({ metadata: { name: "x" }, spec: { containers: [] } })).toBeUndefined();
});
