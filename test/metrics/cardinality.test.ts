// Upstream's cardinality rules for the kubelet's /metrics: no kubelet_* histogram is labelled by pod
// (or namespace, uid, container), so its series count does not grow with the pods on the node; the
// per-pod series live on /metrics/probes and /metrics/cadvisor, where upstream puts them.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { renderCadvisorMetrics } from "../../src/server/cadvisor-metrics.ts";
import { fakeCadvisorNode, fakePods, populateKubeletMetrics } from "../support/metrics-node.ts";
import { parsePromText, type PromFamily } from "../support/prom-text.ts";

const PER_POD = new Set(["pod", "namespace", "uid", "pod_uid", "pod_name", "container", "id", "name"]);
const seriesCount = (f: PromFamily) => f.samples.length;

async function families(n: number) {
  const { metrics, probes } = await populateKubeletMetrics(fakePods(n));
  return { metrics: parsePromText(metrics.render()), probes: parsePromText(probes.render()) };
}

describe("cardinality of /metrics", () => {
  test("no kubelet_* histogram has a per-pod label, and none grows from 10 to 110 pods", async () => {
    const [small, big] = [await families(10), await families(110)];
    const histograms = [...big.metrics.values()].filter((f) => f.name.startsWith("kubelet_") && f.type === "histogram");
    expect(histograms.length).toBeGreaterThanOrEqual(8);
    const labelled = histograms.flatMap((f) =>
      [...new Set(f.samples.flatMap((s) => Object.keys(s.labels)))].filter((l) => PER_POD.has(l)).map((l) => `${f.name}{${l}}`),
    );
    expect(labelled).toEqual([]);
    const grown = histograms
      .filter((f) => seriesCount(f) !== seriesCount(small.metrics.get(f.name)!))
      .map((f) => `${f.name}: ${seriesCount(small.metrics.get(f.name)!)} → ${seriesCount(f)}`);
    expect(grown).toEqual([]);
  });

  test("no /metrics family at all grows with the pods; the prober's per-pod series are on /metrics/probes", async () => {
    const [small, big] = [await families(10), await families(110)];
    const grown = [...big.metrics.values()]
      .filter((f) => seriesCount(f) !== seriesCount(small.metrics.get(f.name)!) && !f.name.startsWith("process_"))
      .map((f) => f.name);
    expect(grown).toEqual([]);
    // 110 pods × 2 containers × 2 probe types.
    expect(big.probes.get("prober_probe_total")!.samples.length).toBe(440);
  });
});

describe("cardinality of /metrics/cadvisor", () => {
  const root = mkdtempSync(join(tmpdir(), "bunlet-cardinality-"));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  test("per container as cAdvisor: 110 pods → 1 root + 110 pod + 220 container series of working set", async () => {
    const text = renderCadvisorMetrics(await fakeCadvisorNode(root, fakePods(110))(), Date.now());
    const fams = parsePromText(text);
    expect(fams.get("container_memory_working_set_bytes")!.samples.length).toBe(331);
    expect(fams.get("container_network_receive_bytes_total")!.samples.length).toBe(110);
    expect(fams.get("container_scrape_error")!.samples[0]!.value).toBe(0);
  });
});
