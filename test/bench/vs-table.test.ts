import { describe, expect, test } from "bun:test";
import { type AgentResult, bestFloor, formatTable, tableRows } from "../../scripts/bench/lib/vs-table.ts";
import { kubeadmKubeletConfig, standaloneKubeletConfig } from "../support/upstream/kubelet-config.ts";

const idle = (cpuPct: number, rssMb: number) => ({ cpuPct, rssMb, pssMb: rssMb - 10, wakeupsPerS: 5, threads: 10 });
const kubelet: AgentResult = {
  idle0: idle(1, 60),
  idle100: idle(4, 100),
  burst: { firstMs: 900, allMs: 20_000 },
  restart: { ms: 4000, sameContainers: true, containersBefore: 100, containersAfter: 100 },
  podStartMs: [800, 1000, 900],
  errors: [],
};
const bunlet: AgentResult = {
  idle0: idle(0.4, 70),
  idle100: idle(1.5, 70),
  burst: { firstMs: 700, allMs: 12_000, agentCpuMs: 1500 },
  restart: { ms: 1000, sameContainers: true, containersBefore: 100, containersAfter: 100 },
  podStartMs: [300, 500, 400],
  errors: [],
};
const floor = { 2: { firstMs: 200, allMs: 11_000 }, 4: { firstMs: 300, allMs: 10_000 }, 100: { firstMs: 900, allMs: 14_000 } };
const byFigure = (rows: ReturnType<typeof tableRows>) => Object.fromEntries(rows.map((r) => [r.figure, r]));

describe("tableRows", () => {
  test("ratios are bunlet ÷ kubelet, and each goal is judged as the figure states it", () => {
    const rows = byFigure(tableRows(kubelet, bunlet, floor));
    expect(rows["1. idle, 0 pods: CPU"]).toMatchObject({ kubelet: 1, bunlet: 0.4, ratio: 0.4, goal: "≤ 0.50×", met: true });
    expect(rows["1. idle, 0 pods: RSS"]).toMatchObject({ ratio: 70 / 60, goal: "≤ 1.00×", met: false });
    expect(rows["1. idle, 100 pods: RSS"]).toMatchObject({ ratio: 0.7, goal: "≤ 0.80×", met: true });
    expect(rows["1. idle, 100 pods: wake-ups"]).toMatchObject({ goal: "—" });
    expect(rows["1. idle, 100 pods: wake-ups"]!.met).toBeUndefined();
    expect(rows["2. 100 manifests at once: first running"]).toMatchObject({ kubelet: 0.9, bunlet: 0.7, goal: "bunlet ≤ 1 s", met: true });
    expect(rows["2. 100 manifests at once: all running"]).toMatchObject({ ratio: 0.6, met: true });
    expect(rows["2. all running ÷ best bare-CRI floor"]).toMatchObject({ kubelet: 2, bunlet: 1.2, met: false });
    expect(rows["2. the agent's own CPU time meanwhile"]).toMatchObject({ kubelet: undefined, bunlet: 1.5, goal: "—" });
    expect(rows["3. one static pod: manifest → running, median"]).toMatchObject({ kubelet: 900, bunlet: 400, met: true });
    expect(rows["4. restart, 100 pods: start → all re-adopted"]).toMatchObject({ kubelet: 4, bunlet: 1, ratio: 0.25, met: true });
  });

  test("a restart that started new containers misses its goal; figures not measured are left out", () => {
    const b: AgentResult = { ...bunlet, idle0: undefined, idle100: undefined, restart: { ...bunlet.restart!, sameContainers: false } };
    const rows = byFigure(tableRows({ ...kubelet, idle0: undefined, idle100: undefined }, b, floor));
    expect(rows["4. restart, 100 pods: start → all re-adopted"]!.met).toBe(false);
    expect(Object.keys(rows).some((f) => f.startsWith("1."))).toBe(false);
  });

  test("one pod's bare-CRI floor: its median in both columns without a ratio, and each agent's median over it", () => {
    const rows = byFigure(tableRows(kubelet, bunlet, floor, [250, 300, 200]));
    expect(rows["3. one pod by bare CRI calls (the floor), median"]).toMatchObject({ kubelet: 250, bunlet: 250, ratio: undefined, goal: "—" });
    expect(rows["3. one static pod: median over the floor"]).toMatchObject({ kubelet: 650, bunlet: 150, ratio: 150 / 650 });
    expect(Object.keys(byFigure(tableRows(kubelet, bunlet, floor))).some((f) => f.includes("floor), median"))).toBe(false);
  });

  test("a figure only one agent has gets no ratio and misses a ratio goal", () => {
    const rows = byFigure(tableRows({ podStartMs: [], errors: ["x"] }, bunlet, {}));
    expect(rows["1. idle, 0 pods: CPU"]).toMatchObject({ kubelet: undefined, ratio: undefined, met: false });
    expect(rows["2. all running ÷ best bare-CRI floor"]).toBeUndefined();
  });
});

describe("figure 5, the memory ramp", () => {
  const run = (receivedMs: number | undefined, oomKills = 0) => ({ crossedAt: 0, receivedMs, oomKills, hostOomKills: oomKills });
  const series = (ms: (number | undefined)[], oom = 0) => ({ runs: ms.map((x, i) => run(x, i === 0 ? oom : 0)), errors: [] });
  const k: AgentResult = { podStartMs: [], errors: [], ramp: series([300, 500, 400]), rampPeriodic: series([4000, 9000, undefined], 1) };
  const b: AgentResult = { podStartMs: [], errors: [], ramp: series([1.5, 2, 3]) };

  test("p99 against the kubelet with notification on: met at ≤ 0.01× with no OOM kill; OOM kills and runs with SIGTERM counted", () => {
    const rows = byFigure(tableRows(k, b, {}));
    const on = "5. memory ramp (kubelet notification on)";
    expect(rows[`${on}: crossing → SIGTERM, p99`]).toMatchObject({ kubelet: 500, bunlet: 3, ratio: 0.006, goal: "≤ 0.010×", met: true });
    expect(rows[`${on}: crossing → SIGTERM, p50`]).toMatchObject({ kubelet: 400, bunlet: 2, goal: "—" });
    expect(rows[`${on}: kernel OOM kills`]).toMatchObject({ kubelet: 0, bunlet: 0, goal: "bunlet ≤ 0 kills", met: true });
    const off = "5. memory ramp (kubelet notification off)";
    expect(rows[`${off}: crossing → SIGTERM, p99`]).toMatchObject({ kubelet: 9000, bunlet: 3, goal: "—" });
    expect(rows[`${off}: kernel OOM kills`]).toMatchObject({ kubelet: 1, bunlet: 0 });
    expect(rows[`${off}: runs with SIGTERM`]).toMatchObject({ kubelet: 2, bunlet: 3 });
  });

  test("a bunlet run ended by the OOM killer misses the goal, whatever the ratio", () => {
    const rows = byFigure(tableRows(k, { ...b, ramp: series([1, 2, undefined], 1) }, {}));
    expect(rows["5. memory ramp (kubelet notification on): crossing → SIGTERM, p99"]!.met).toBe(false);
    expect(rows["5. memory ramp (kubelet notification on): kernel OOM kills"]).toMatchObject({ bunlet: 1, met: false });
  });

  test("small ratios keep two significant digits, ms under 10 one decimal", () => {
    const line = formatTable(tableRows(k, b, {}))
      .split("\n")
      .find((l) => l.includes("notification on): crossing → SIGTERM, p99"));
    expect(line).toMatch(/500 ms \| +3\.0 ms \| +0\.0060× \| +≤ 0\.010× \| +yes \|$/);
  });
});

test("figure 6: medians of the cluster samples, the request rate judged at 1.0×, 110 pods all Running with no goal", () => {
  const cluster = (readyMs: number[], podRunningMs: number[], perMin: number) => ({
    readyMs,
    podRunningMs,
    allRunningMs: 30_000,
    requests: { windowS: 60, perMin, byKind: { "get nodes": 6 } },
  });
  const rows = byFigure(
    tableRows(
      { ...kubelet, cluster: cluster([2000, 3000, 4000], [1000, 1200, 1100], 20) },
      { ...bunlet, cluster: cluster([1500, 900, 1000], [600, 900, 700], 22) },
      floor,
    ),
  );
  expect(rows["6. cluster: start → Node Ready (TLS bootstrap), median"]).toMatchObject({ kubelet: 3, bunlet: 1, goal: "≤ 1.00×", met: true });
  expect(rows["6. cluster: API pod created → Running, median"]).toMatchObject({ kubelet: 1100, bunlet: 700, goal: "≤ 0.70×", met: true });
  expect(rows["6. cluster: API pod created → Running, p90"]!.met).toBeUndefined();
  expect(rows["6. cluster: 110 API pods at once → all Running"]).toMatchObject({ kubelet: 30, bunlet: 30, ratio: 1, goal: "—" });
  expect(rows["6. cluster: node's API requests, 110 pods, steady"]).toMatchObject({ ratio: 1.1, met: false });
  expect(Object.keys(byFigure(tableRows(kubelet, bunlet, floor))).some((f) => f.startsWith("6."))).toBe(false);
});

test("bestFloor is the lowest all-running time", () => {
  expect(bestFloor(floor)).toEqual({ concurrency: 4, allMs: 10_000 });
  expect(bestFloor({})).toBeUndefined();
});

test("formatTable prints one aligned row a figure, with units, ratios and yes/no", () => {
  const text = formatTable(tableRows(kubelet, bunlet, floor));
  const lines = text.split("\n");
  expect(lines[0]).toMatch(/^\| figure +\| +kubelet \| +bunlet \| +ratio \| +goal \| +met \|$/);
  expect(new Set(lines.map((l) => l.length)).size).toBe(1);
  expect(text).toContain("| 1. idle, 0 pods: CPU");
  expect(lines.find((l) => l.includes("0 pods: CPU"))).toMatch(/1\.00 % of a core \| +0\.40 % of a core \| +0\.40× \| +≤ 0\.50× \| +yes \|$/);
  expect(lines.find((l) => l.includes("median"))).toMatch(/900 ms \| +400 ms \| +0\.44× /);
});

describe("the KubeletConfiguration both agents take", () => {
  const paths = { manifests: "/m", endpoint: "unix:///c.sock", cgroupRoot: "/r", podLogsDir: "/l", port: 1234 };
  test("standalone: anonymous and AlwaysAllow on loopback, swap tolerated, the node's paths", () => {
    const text = standaloneKubeletConfig(paths, ["maxPods: 5"]);
    for (const line of ["address: 127.0.0.1", "  anonymous: { enabled: true }", "  webhook: { enabled: false }", "  mode: AlwaysAllow", "failSwapOn: false"])
      expect(text.split("\n")).toContain(line);
    for (const line of [
      "cgroupDriver: cgroupfs",
      "staticPodPath: /m",
      "containerRuntimeEndpoint: unix:///c.sock",
      "cgroupRoot: /r",
      "readOnlyPort: 0",
      "port: 1234",
      "maxPods: 5",
    ])
      expect(text.split("\n")).toContain(line);
    expect(text.endsWith("\n")).toBe(true);
  });
  test("kubeadm's keeps webhook authentication and the cluster CA", () => {
    const lines = kubeadmKubeletConfig({ ...paths, caFile: "/ca.crt" }).split("\n");
    expect(lines).toContain("  webhook: { enabled: true, cacheTTL: 0s }");
    expect(lines).toContain("  x509: { clientCAFile: /ca.crt }");
    expect(lines).toContain("staticPodPath: /m");
  });
});
