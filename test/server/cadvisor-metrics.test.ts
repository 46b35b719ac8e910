// /metrics/cadvisor: cAdvisor's container_* and machine_* series built from a fake cgroup v1 tree, a fake
// /proc and a fake CRI (the summary's sources), checked with the strict text parser and promtool.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { CriClient } from "../../src/cri/client.ts";
import { CONTAINER_NAME_LABEL, POD_UID_LABEL } from "../../src/pod/kuberuntime/labels.ts";
import type { Pod } from "../../src/pod/types.ts";
import { requestAttributes } from "../../src/server/auth/attributes.ts";
import { renderCadvisorMetrics } from "../../src/server/cadvisor-metrics.ts";
import { cadvisorMemory, createCadvisorSource, deviceOf, parseNetDev } from "../../src/stats/cadvisor.ts";
import { parsePromText } from "../support/prom-text.ts";
import { hasPrometheus, promtoolCheckMetrics } from "../support/prometheus.ts";

const NET_DEV = `Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo:    1000      10    0    0    0     0          0         0     1000      10    0    0    0     0       0          0
  eth0:   52000     400    0    0    0     0          0         0    31000     300    0    0    0     0       0          0
veth12:     500       5    0    0    0     0          0         0      500       5    0    0    0     0       0          0
`;

describe("pure parts", () => {
  test("net/dev: bytes per interface, lo and veth* skipped as cAdvisor", () => {
    expect(parseNetDev(NET_DEV)).toEqual([{ interface: "eth0", receiveBytes: 52000, transmitBytes: 31000 }]);
  });
  test.each([
    [
      1,
      "4096000",
      "total_cache 1000\ntotal_rss 3000000\ntotal_inactive_file 96000\ntotal_swap 8192\n",
      "9223372036854771712",
      undefined,
      { usageBytes: 4096000, workingSetBytes: 4000000, rssBytes: 3000000, cacheBytes: 1000, limitBytes: 0, swapBytes: 8192 },
    ],
    [
      2,
      "5000\n",
      "anon 3000\nfile 2000\ninactive_file 1000\n",
      "max\n",
      "12288\n",
      { usageBytes: 5000, workingSetBytes: 4000, rssBytes: 3000, cacheBytes: 2000, limitBytes: 0, swapBytes: 12288 },
    ],
    [
      2,
      "5000\n",
      "anon 3000\nfile 2000\ninactive_file 9000\n",
      "67108864\n",
      undefined, // no swap accounting
      { usageBytes: 5000, workingSetBytes: 0, rssBytes: 3000, cacheBytes: 2000, limitBytes: 67108864, swapBytes: 0 },
    ],
  ] as const)("memory v%d: usage, working set, rss, cache, limit (0 = unlimited), swap", (v, usage, stat, limit, swap, want) => {
    expect(cadvisorMemory(v, usage, stat, limit, swap)).toEqual(want);
  });
  test("the device of a path is the source of its longest mount point", () => {
    const mi = [
      "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw",
      "30 22 8:17 / /var/lib/containerd rw,relatime shared:2 - xfs /dev/sdb1 rw",
      "31 22 0:5 / /var/lib/containerd2 rw - tmpfs tmpfs rw",
    ].join("\n");
    expect(deviceOf(mi, "/var/lib/containerd/io.containerd.snapshotter.v1.overlayfs")).toBe("/dev/sdb1");
    expect(deviceOf(mi, "/var/lib/other")).toBe("/dev/sda1");
  });
  test("/metrics/cadvisor maps to nodes/metrics for authorization", () => {
    const user = { name: "prometheus", groups: [] };
    expect(requestAttributes(user, "GET", "/metrics/cadvisor", "n1").map((a) => a.subresource)).toEqual(["metrics"]);
  });
});

describe("from cgroups, /proc and the CRI", () => {
  const root = mkdtempSync(join(tmpdir(), "bunlet-cadvisor-"));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const put = (path: string, text: string) => {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  };
  const cgroup = (rel: string, usage: number, cpuNs: number, limit = "9223372036854771712") => {
    put(`cg/memory/${rel}/memory.usage_in_bytes`, `${usage}\n`);
    put(`cg/memory/${rel}/memory.stat`, `total_cache 100\ntotal_rss ${usage - 200}\ntotal_inactive_file 50\ntotal_swap 4096\n`);
    put(`cg/memory/${rel}/memory.limit_in_bytes`, `${limit}\n`);
    put(`cg/memory/${rel}/cgroup.procs`, "");
    put(`cg/cpuacct/${rel}/cpuacct.usage`, `${cpuNs}\n`);
  };
  cgroup("", 8_000_000_000, 9_000_000_000_000);
  cgroup("kubepods/burstable/poduid-1", 40_000_000, 3_000_000_000);
  cgroup("kubepods/burstable/poduid-1/cid-app", 30_000_000, 2_500_000_000, "67108864");
  put("cg/memory/kubepods/burstable/poduid-1/cid-app/cgroup.procs", "4242\n");
  put("proc/4242/net/dev", NET_DEV);
  put("proc/self/mountinfo", "22 1 8:1 / / rw - ext4 /dev/root rw\n");
  put(
    "cg/blkio/kubepods/burstable/poduid-1/cid-app/blkio.throttle.io_service_bytes",
    "8:0 Read 4096\n8:0 Write 8192\n8:0 Sync 0\n8:0 Async 12288\n8:0 Total 12288\nTotal 12288\n",
  );
  put("cg/blkio/kubepods/burstable/poduid-1/cid-app/blkio.throttle.io_serviced", "8:0 Read 1\n8:0 Write 2\n8:0 Total 3\nTotal 3\n");
  put("sys/dev/block/8:0/uevent", "MAJOR=8\nMINOR=0\nDEVNAME=sda\nDEVTYPE=disk\n");

  const pod = {
    metadata: { name: "web", namespace: "shop", uid: "uid-1" },
    spec: { containers: [{ name: "app", image: "registry.local/app:1.2" }] },
    status: { phase: "Running" },
  } as unknown as Pod;
  const cri = {
    listContainers: async () => [
      {
        id: "cid-app",
        podSandboxId: "sb",
        metadata: { name: "app", attempt: 0 },
        image: { image: "sha256:abc" },
        imageRef: "",
        state: "CONTAINER_RUNNING",
        createdAt: 1_700_000_000_123_000_000,
        labels: { [POD_UID_LABEL]: "uid-1", [CONTAINER_NAME_LABEL]: "app" },
        annotations: {},
        imageId: "",
      },
    ],
    listContainerStats: async () => [
      {
        attributes: { id: "cid-app", metadata: null, labels: {}, annotations: {} },
        cpu: null,
        memory: null,
        writableLayer: { timestamp: 0, fsId: { mountpoint: root }, usedBytes: { value: 12288 }, inodesUsed: { value: 3 } },
      },
    ],
  } as unknown as Pick<CriClient, "listContainers" | "listContainerStats">;
  const source = createCadvisorSource({
    activePods: () => [pod],
    podCgroupPath: () => "kubepods/burstable/poduid-1",
    cri,
    cgroupMountRoot: join(root, "cg"),
    procRoot: join(root, "proc"),
    sysDevBlock: join(root, "sys/dev/block"),
    machine: async () => ({ memoryBytes: 16e9, cpuCores: 4, bootID: "b", machineID: "m", systemUUID: "u" }),
  });

  test("root, pod and container series with cAdvisor's names and labels", async () => {
    const text = renderCadvisorMetrics(await source(), 1_700_000_100_900);
    const fams = parsePromText(text);
    const value = (name: string, labels: Record<string, string>) =>
      fams.get(name)?.samples.find((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;
    const app = {
      container: "app",
      pod: "web",
      namespace: "shop",
      id: "/kubepods/burstable/poduid-1/cid-app",
      name: "cid-app",
      image: "registry.local/app:1.2",
    };
    expect(value("container_memory_working_set_bytes", app)).toBe(30_000_000 - 50);
    expect(value("container_memory_rss", app)).toBe(30_000_000 - 200);
    expect(value("container_memory_cache", app)).toBe(100);
    expect(value("container_memory_usage_bytes", app)).toBe(30_000_000);
    expect(value("container_memory_swap", app)).toBe(4096);
    expect(value("container_spec_memory_limit_bytes", app)).toBe(67108864);
    expect(value("container_cpu_usage_seconds_total", { ...app, cpu: "total" })).toBe(2.5);
    expect(value("container_start_time_seconds", app)).toBe(1_700_000_000.123);
    expect(value("container_last_seen", app)).toBe(1_700_000_100);
    expect(value("container_fs_usage_bytes", { ...app, device: "/dev/root" })).toBe(12288);
    expect(value("container_fs_limit_bytes", { ...app, device: "/dev/root" })).toBeGreaterThan(0);
    expect(value("container_fs_reads_bytes_total", { ...app, device: "/dev/sda" })).toBe(4096);
    expect(value("container_fs_writes_bytes_total", { ...app, device: "/dev/sda" })).toBe(8192);
    expect(value("container_fs_reads_total", { ...app, device: "/dev/sda" })).toBe(1);
    expect(value("container_fs_writes_total", { ...app, device: "/dev/sda" })).toBe(2);
    expect(fams.get("container_fs_reads_bytes_total")!.type).toBe("counter");
    const podLevel = { container: "", pod: "web", namespace: "shop", id: "/kubepods/burstable/poduid-1", name: "", image: "" };
    expect(value("container_memory_working_set_bytes", podLevel)).toBe(40_000_000 - 50);
    expect(value("container_spec_memory_limit_bytes", podLevel)).toBe(0);
    expect(value("container_network_receive_bytes_total", { ...podLevel, interface: "eth0" })).toBe(52000);
    expect(value("container_network_transmit_bytes_total", { ...podLevel, interface: "eth0" })).toBe(31000);
    expect(value("container_memory_working_set_bytes", { id: "/", pod: "", container: "" })).toBe(8_000_000_000 - 50);
    expect(value("machine_memory_bytes", { boot_id: "b", machine_id: "m", system_uuid: "u" })).toBe(16e9);
    expect(value("machine_cpu_cores", {})).toBe(4);
    expect(value("container_scrape_error", {})).toBe(0);
    expect(fams.get("container_cpu_usage_seconds_total")!.type).toBe("counter");
    expect(fams.get("container_network_receive_bytes_total")!.type).toBe("counter");
    // Every sample of a family carries the same label names (Prometheus' rule).
    for (const f of fams.values()) expect(new Set(f.samples.map((s) => Object.keys(s.labels).sort().join(","))).size).toBe(1);
    if (hasPrometheus()) expect(promtoolCheckMetrics(text)).toBe("");
  });

  test("a runtime that does not answer: the cgroup figures still, and container_scrape_error 1", async () => {
    const failing = {
      listContainers: async () => Promise.reject(new Error("connection refused")),
      listContainerStats: async () => Promise.reject(new Error("connection refused")),
    } as unknown as Pick<CriClient, "listContainers" | "listContainerStats">;
    const snap = await createCadvisorSource({
      activePods: () => [pod],
      podCgroupPath: () => "kubepods/burstable/poduid-1",
      cri: failing,
      cgroupMountRoot: join(root, "cg"),
      procRoot: join(root, "proc"),
    })();
    expect(snap.containers.map((c) => c.id)).toEqual(["/", "/kubepods/burstable/poduid-1"]);
    expect(renderCadvisorMetrics(snap, 0)).toContain("container_scrape_error 1\n");
  });

  test("a pod whose cgroup is gone is left out, not an error", async () => {
    const gone = createCadvisorSource({
      activePods: () => [pod],
      podCgroupPath: () => "kubepods/besteffort/podnone",
      cgroupMountRoot: join(root, "cg"),
      procRoot: join(root, "proc"),
    });
    const snap = await gone();
    expect(snap.containers.map((c) => c.id)).toEqual(["/"]);
    expect(snap.error).toBe(false);
  });
});
