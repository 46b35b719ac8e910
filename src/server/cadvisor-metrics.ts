// /metrics/cadvisor (upstream: the kubelet's embedded cAdvisor exporter, registered in
// pkg/kubelet/server/server.go with containerPrometheusLabelsFunc): the container_* and machine_*
// series Prometheus users query, with cAdvisor's names, types, help and labels
// (container, id, image, name, namespace, pod; + cpu, device, interface where cAdvisor has them).
// The figures come from src/stats/cadvisor.ts (the summary's sources); this file only renders them.
import type { CadvisorContainer, CadvisorSnapshot } from "../stats/cadvisor.ts";
import type { DeviceIo } from "../stats/io.ts";
import { escapeHelp, escapeLabelValue, formatValue } from "./metrics.ts";

interface Family {
  name: string;
  help: string;
  type: "counter" | "gauge";
  samples: string[];
}

const pairs = (l: Record<string, string>) =>
  Object.entries(l)
    .map(([k, v]) => `${k}="${escapeLabelValue(v)}"`)
    .join(",");

/** A container's six labels, escaped once per scrape and shared by all its samples. */
const containerLabels = (c: CadvisorContainer) => pairs({ container: c.container, id: c.id, image: c.image, name: c.name, namespace: c.namespace, pod: c.pod });

/** The per-container families, in cAdvisor's order; each reads one figure (undefined ⇒ no sample). */
const CONTAINER_FAMILIES: {
  name: string;
  help: string;
  type: Family["type"];
  value(c: CadvisorContainer, nowS: number): number | undefined;
  extra?: Record<string, string>;
}[] = [
  {
    name: "container_cpu_usage_seconds_total",
    help: "Cumulative cpu time consumed in seconds.",
    type: "counter",
    value: (c) => c.cpuUsageSeconds,
    extra: { cpu: "total" },
  },
  { name: "container_last_seen", help: "Last time a container was seen by the exporter", type: "gauge", value: (_c, nowS) => nowS },
  { name: "container_memory_cache", help: "Number of bytes of page cache memory.", type: "gauge", value: (c) => c.memory?.cacheBytes },
  { name: "container_memory_rss", help: "Size of RSS in bytes.", type: "gauge", value: (c) => c.memory?.rssBytes },
  { name: "container_memory_swap", help: "Container swap usage in bytes.", type: "gauge", value: (c) => c.memory?.swapBytes },
  {
    name: "container_memory_usage_bytes",
    help: "Current memory usage in bytes, including all memory regardless of when it was accessed",
    type: "gauge",
    value: (c) => c.memory?.usageBytes,
  },
  { name: "container_memory_working_set_bytes", help: "Current working set in bytes.", type: "gauge", value: (c) => c.memory?.workingSetBytes },
  { name: "container_spec_memory_limit_bytes", help: "Memory limit for the container.", type: "gauge", value: (c) => c.memory?.limitBytes },
  { name: "container_start_time_seconds", help: "Start time of the container since unix epoch in seconds.", type: "gauge", value: (c) => c.startTimeSeconds },
];

export function renderCadvisorMetrics(snap: CadvisorSnapshot, nowMs: number): string {
  const families: Family[] = [];
  const family = (name: string, help: string, type: Family["type"]): Family => {
    const f = { name, help, type, samples: [] };
    families.push(f);
    return f;
  };
  const nowS = Math.floor(nowMs / 1000);
  const labels = snap.containers.map(containerLabels);
  for (const def of CONTAINER_FAMILIES) {
    const f = family(def.name, def.help, def.type);
    const extra = def.extra ? `,${pairs(def.extra)}` : "";
    snap.containers.forEach((c, i) => {
      const v = def.value(c, nowS);
      if (v !== undefined) f.samples.push(`${def.name}{${labels[i]}${extra}} ${formatValue(v)}`);
    });
  }
  const fsUsage = family("container_fs_usage_bytes", "Number of bytes that are consumed by the container on this filesystem.", "gauge");
  const fsLimit = family("container_fs_limit_bytes", "Number of bytes that can be consumed by the container on this filesystem.", "gauge");
  const ioFamilies = [
    [family("container_fs_reads_bytes_total", "Cumulative count of bytes read", "counter"), (x: DeviceIo) => x.readBytes],
    [family("container_fs_reads_total", "Cumulative count of reads completed", "counter"), (x: DeviceIo) => x.reads],
    [family("container_fs_writes_bytes_total", "Cumulative count of bytes written", "counter"), (x: DeviceIo) => x.writeBytes],
    [family("container_fs_writes_total", "Cumulative count of writes completed", "counter"), (x: DeviceIo) => x.writes],
  ] as const;
  const rx = family("container_network_receive_bytes_total", "Cumulative count of bytes received", "counter");
  const tx = family("container_network_transmit_bytes_total", "Cumulative count of bytes transmitted", "counter");
  snap.containers.forEach((c, i) => {
    for (const fs of c.fs ?? []) {
      const l = `{${labels[i]},${pairs({ device: fs.device })}}`;
      fsUsage.samples.push(`${fsUsage.name}${l} ${formatValue(fs.usageBytes)}`);
      fsLimit.samples.push(`${fsLimit.name}${l} ${formatValue(fs.limitBytes)}`);
    }
    for (const x of c.io ?? []) {
      const l = `{${labels[i]},${pairs({ device: x.device })}}`;
      for (const [f, value] of ioFamilies) f.samples.push(`${f.name}${l} ${formatValue(value(x))}`);
    }
    for (const n of c.network ?? []) {
      const l = `{${labels[i]},${pairs({ interface: n.interface })}}`;
      rx.samples.push(`${rx.name}${l} ${formatValue(n.receiveBytes)}`);
      tx.samples.push(`${tx.name}${l} ${formatValue(n.transmitBytes)}`);
    }
  });
  if (snap.machine) {
    const m = snap.machine;
    const l = `{${pairs({ boot_id: m.bootID, machine_id: m.machineID, system_uuid: m.systemUUID })}}`;
    family("machine_cpu_cores", "Number of logical CPU cores.", "gauge").samples.push(`machine_cpu_cores${l} ${m.cpuCores}`);
    family("machine_memory_bytes", "Amount of memory installed on the machine.", "gauge").samples.push(`machine_memory_bytes${l} ${m.memoryBytes}`);
  }
  family("container_scrape_error", "1 if there was an error while getting container metrics, 0 otherwise", "gauge").samples.push(
    `container_scrape_error ${snap.error ? 1 : 0}`,
  );
  return families
    .filter((f) => f.samples.length > 0)
    .map((f) => `# HELP ${f.name} ${escapeHelp(f.help)}\n# TYPE ${f.name} ${f.type}\n${f.samples.join("\n")}\n`)
    .join("");
}
