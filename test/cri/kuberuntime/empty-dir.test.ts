import { describe, expect, test } from "bun:test";
import { emptyDirMemorySizeBytes, emptyDirPath, mountPointsUnder, podMemoryLimitBytes } from "../../../src/pod/kuberuntime/empty-dir.ts";
import type { KubeContainer, KubePod } from "../../../src/pod/kuberuntime/types.ts";

const Mi = 2 ** 20;
const c = (memoryLimit?: string): KubeContainer => ({
  name: `c${memoryLimit}`,
  image: "x",
  ...(memoryLimit ? { resources: { limits: { memory: memoryLimit } } } : {}),
});
const pod = (containers: KubeContainer[], initContainers?: KubeContainer[]): KubePod => ({
  metadata: { name: "p", namespace: "ns", uid: "u1" },
  spec: { containers, ...(initContainers ? { initContainers } : {}) },
});

const withOverhead = (p: KubePod, memory: string): KubePod => ({ ...p, spec: { ...p.spec, overhead: { memory } } });

describe("emptyDir medium Memory size (upstream calculateEmptyDirMemorySize)", () => {
  test.each([
    ["no limits, no sizeLimit: node allocatable", pod([c()]), undefined, 1024 * Mi, 1024 * Mi],
    ["pod limit below allocatable", pod([c("64Mi"), c("32Mi")]), undefined, 1024 * Mi, 96 * Mi],
    ["sizeLimit below the pod limit", pod([c("64Mi")]), "8Mi", 1024 * Mi, 8 * Mi],
    ["sizeLimit above the pod limit: the pod limit", pod([c("64Mi")]), "1Gi", 1024 * Mi, 64 * Mi],
    ["allocatable is the ceiling", pod([c("4Gi")]), "8Gi", 1024 * Mi, 1024 * Mi],
    ["init container limit raises the pod limit", pod([c("16Mi")], [c("128Mi")]), undefined, 1024 * Mi, 128 * Mi],
    ["a container without limit adds nothing (upstream PodLimits)", pod([c("16Mi"), c()]), undefined, 1024 * Mi, 16 * Mi],
    ["sizeLimit 0 is ignored", pod([c()]), "0", 1024 * Mi, 1024 * Mi],
    ["unknown allocatable: the smaller known bound", pod([c()]), "8Mi", 0, 8 * Mi],
    ["overhead adds to a pod limit", withOverhead(pod([c("64Mi")]), "16Mi"), undefined, 1024 * Mi, 80 * Mi],
    ["overhead without a pod limit: allocatable", withOverhead(pod([c()]), "16Mi"), undefined, 1024 * Mi, 1024 * Mi],
  ] as const)("%s", (_n, p, sizeLimit, alloc, want) => {
    expect(emptyDirMemorySizeBytes(p, sizeLimit, alloc)).toBe(want);
  });

  test("pod memory limit is undefined without any container limit", () => {
    expect(podMemoryLimitBytes(pod([c(), c()]))).toBeUndefined();
  });
});

test("emptyDir path mirrors the kubelet layout", () => {
  expect(emptyDirPath("/var/lib/kubelet", "u1", "cache")).toBe("/var/lib/kubelet/pods/u1/volumes/kubernetes.io~empty-dir/cache");
});

test("mount points under a prefix, deepest first, octal escapes decoded, siblings excluded", () => {
  const mi = [
    "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw",
    "40 22 0:50 / /var/lib/kubelet/pods/u1/volumes/kubernetes.io~empty-dir/cache rw shared:2 - tmpfs tmpfs rw,size=8192k",
    "41 22 0:51 / /var/lib/kubelet/pods/u1/volumes/kubernetes.io~empty-dir/with\\040space rw - tmpfs tmpfs rw",
    "42 22 0:52 / /var/lib/kubelet/pods/u10/volumes/kubernetes.io~empty-dir/x rw - tmpfs tmpfs rw",
    "43 22 0:53 / /var/lib/kubelet/pods/u1 rw - tmpfs tmpfs rw",
  ].join("\n");
  expect(mountPointsUnder("/var/lib/kubelet/pods/u1", mi)).toEqual([
    "/var/lib/kubelet/pods/u1/volumes/kubernetes.io~empty-dir/with space",
    "/var/lib/kubelet/pods/u1/volumes/kubernetes.io~empty-dir/cache",
    "/var/lib/kubelet/pods/u1",
  ]);
});
