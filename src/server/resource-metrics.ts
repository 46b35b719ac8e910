// /metrics/resource, the endpoint metrics-server scrapes (upstream
// pkg/kubelet/metrics/collectors/resource_metrics.go): node, pod and container CPU (cumulative
// core-seconds), memory working set and swap usage (container swap limit too), container start
// times, and resource_scrape_error, each
// sample stamped with the time its stats were taken (ms), as upstream does. Read from the Summary
// API's CPU and memory stats, so the numbers are the same ones /stats/summary serves.
import type { CPUStats, MemoryStats, Summary, SwapStats } from "../stats/summary.ts";

interface Family {
  name: string;
  help: string;
  type: "counter" | "gauge";
  samples: string[];
}

const esc = (v: string) => v.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
const labels = (l: Record<string, string>) =>
  `{${Object.entries(l)
    .map(([k, v]) => `${k}="${esc(v)}"`)
    .join(",")}}`;
const num = (n: number) => (Number.isInteger(n) ? String(n) : n.toPrecision(17).replace(/\.?0+$/, ""));

function stamp(time: string | undefined): string {
  const ms = time ? Date.parse(time) : NaN;
  return Number.isFinite(ms) ? ` ${ms}` : "";
}

function family(name: string, help: string, type: Family["type"], stability: "STABLE" | "ALPHA" = "STABLE"): Family {
  return { name, help: `[${stability}] ${help}`, type, samples: [] };
}

function addCpu(f: Family, l: Record<string, string>, cpu: CPUStats | undefined): void {
  if (cpu?.usageCoreNanoSeconds === undefined) return;
  f.samples.push(`${f.name}${labels(l)} ${num(cpu.usageCoreNanoSeconds / 1e9)}${stamp(cpu.time)}`);
}

/** The swap used, when reported (upstream collect*SwapMetrics). */
function addSwap(f: Family, l: Record<string, string>, swap: SwapStats | undefined): void {
  if (swap?.swapUsageBytes === undefined) return;
  f.samples.push(`${f.name}${labels(l)} ${num(swap.swapUsageBytes)}${stamp(swap.time)}`);
}

/** collectContainerSwapMetrics: the limit is available + used, when the available bytes are reported. */
function addSwapLimit(f: Family, l: Record<string, string>, swap: SwapStats | undefined): void {
  if (swap?.swapAvailableBytes === undefined) return;
  f.samples.push(`${f.name}${labels(l)} ${num(swap.swapAvailableBytes + (swap.swapUsageBytes ?? 0))}${stamp(swap.time)}`);
}

function addMemory(f: Family, l: Record<string, string>, mem: MemoryStats | undefined): void {
  if (mem?.workingSetBytes === undefined) return;
  f.samples.push(`${f.name}${labels(l)} ${num(mem.workingSetBytes)}${stamp(mem.time)}`);
}

const NOT_WINDOWS = "Reported only on non-windows systems";

/** The exposition text; `summary` undefined means the stats could not be read (scrape error 1). */
export function renderResourceMetrics(summary: Summary | undefined): string {
  const f = {
    containerCpu: family("container_cpu_usage_seconds_total", "Cumulative cpu time consumed by the container in core-seconds", "counter"),
    containerMem: family("container_memory_working_set_bytes", "Current working set of the container in bytes", "gauge"),
    containerStart: family("container_start_time_seconds", "Start time of the container since unix epoch in seconds", "gauge"),
    containerSwapLimit: family("container_swap_limit_bytes", `Current amount of the container swap limit in bytes. ${NOT_WINDOWS}`, "gauge", "ALPHA"),
    containerSwap: family("container_swap_usage_bytes", `Current amount of the container swap usage in bytes. ${NOT_WINDOWS}`, "gauge", "ALPHA"),
    nodeCpu: family("node_cpu_usage_seconds_total", "Cumulative cpu time consumed by the node in core-seconds", "counter"),
    nodeMem: family("node_memory_working_set_bytes", "Current working set of the node in bytes", "gauge"),
    nodeSwap: family("node_swap_usage_bytes", `Current swap usage of the node in bytes. ${NOT_WINDOWS}`, "gauge", "ALPHA"),
    podCpu: family("pod_cpu_usage_seconds_total", "Cumulative cpu time consumed by the pod in core-seconds", "counter"),
    podMem: family("pod_memory_working_set_bytes", "Current working set of the pod in bytes", "gauge"),
    podSwap: family("pod_swap_usage_bytes", `Current amount of the pod swap usage in bytes. ${NOT_WINDOWS}`, "gauge", "ALPHA"),
    scrapeError: family("resource_scrape_error", "1 if there was an error while getting container metrics, 0 otherwise", "gauge"),
  };
  if (summary) {
    addCpu(f.nodeCpu, {}, summary.node.cpu);
    addMemory(f.nodeMem, {}, summary.node.memory);
    addSwap(f.nodeSwap, {}, summary.node.swap);
    for (const p of summary.pods) {
      const pl = { namespace: p.podRef.namespace, pod: p.podRef.name };
      addCpu(f.podCpu, pl, p.cpu);
      addMemory(f.podMem, pl, p.memory);
      addSwap(f.podSwap, pl, p.swap);
      for (const c of p.containers ?? []) {
        const cl = { container: c.name, namespace: p.podRef.namespace, pod: p.podRef.name };
        addCpu(f.containerCpu, cl, c.cpu);
        addMemory(f.containerMem, cl, c.memory);
        addSwap(f.containerSwap, cl, c.swap);
        addSwapLimit(f.containerSwapLimit, cl, c.swap);
        const start = c.startTime ? Date.parse(c.startTime) : NaN;
        if (Number.isFinite(start)) f.containerStart.samples.push(`${f.containerStart.name}${labels(cl)} ${num(start / 1000)}`);
      }
    }
  }
  f.scrapeError.samples.push(`resource_scrape_error ${summary ? 0 : 1}`);
  return Object.values(f)
    .filter((x) => x.samples.length > 0)
    .map((x) => `# HELP ${x.name} ${x.help}\n# TYPE ${x.name} ${x.type}\n${x.samples.join("\n")}\n`)
    .join("");
}
