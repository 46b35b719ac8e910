// A real Prometheus (Debian's `prometheus`, installed by scripts/host/setup.sh) for tests: its own
// config, TSDB in a temp dir, web on a free loopback port, killed and removed by stop().
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./binary.ts";
import { until } from "./wait.ts";

export const PROMETHEUS = "/usr/bin/prometheus";
export const PROMTOOL = "/usr/bin/promtool";

export const hasPrometheus = (): boolean => existsSync(PROMETHEUS) && existsSync(PROMTOOL);

export interface ScrapeJob {
  jobName: string;
  metricsPath: string;
  target: string;
  /** Static target labels (e.g. cluster). */
  labels?: Record<string, string>;
  /** The job label Prometheus stores (relabelled), when it differs from jobName. */
  job?: string;
  /** Scrape over HTTPS with a client certificate, as kube-prometheus scrapes kubelets (files, PEM). */
  tls?: { certFile: string; keyFile: string; caFile?: string };
}

export interface TestPrometheus {
  url: string;
  /** An instant query; the result vector (throws on a query error). */
  query(expr: string): Promise<{ metric: Record<string, string>; value: [number, string] }[]>;
  logs(): string;
  stop(): Promise<void>;
}

function configYaml(jobs: ScrapeJob[], ruleFiles: string[], intervalS: number): string {
  const lines = [
    `global:`,
    `  scrape_interval: ${intervalS}s`,
    `  evaluation_interval: ${intervalS}s`,
    `rule_files: ${JSON.stringify(ruleFiles)}`,
    `scrape_configs:`,
  ];
  for (const j of jobs) {
    lines.push(
      `  - job_name: ${JSON.stringify(j.jobName)}`,
      `    metrics_path: ${JSON.stringify(j.metricsPath)}`,
      `    static_configs:`,
      `      - targets: [${JSON.stringify(j.target)}]`,
      `        labels: ${JSON.stringify(j.labels ?? {})}`,
    );
    if (j.tls) {
      // The kubelet's serving certificate is self-signed unless serverTLSBootstrap: kube-prometheus skips verification too.
      const ca = j.tls.caFile ? `ca_file: ${JSON.stringify(j.tls.caFile)}` : "insecure_skip_verify: true";
      lines.push(`    scheme: https`, `    tls_config: { cert_file: ${JSON.stringify(j.tls.certFile)}, key_file: ${JSON.stringify(j.tls.keyFile)}, ${ca} }`);
    }
    // As kube-prometheus: metrics_path tells the kubelet's endpoints apart once they share job="kubelet".
    lines.push(`    relabel_configs:`, `      - source_labels: [__metrics_path__]`, `        target_label: metrics_path`);
    if (j.job) lines.push(`      - target_label: job`, `        replacement: ${JSON.stringify(j.job)}`);
  }
  return lines.join("\n") + "\n";
}

export async function startPrometheus(opts: { jobs: ScrapeJob[]; ruleFiles?: string[]; scrapeIntervalS?: number }): Promise<TestPrometheus> {
  const dir = mkdtempSync(join(tmpdir(), `bunlet-prometheus-${process.pid}-`));
  const config = join(dir, "prometheus.yml");
  writeFileSync(config, configYaml(opts.jobs, opts.ruleFiles ?? [], opts.scrapeIntervalS ?? 1));
  const check = spawnSync(PROMTOOL, ["check", "config", config], { encoding: "utf8" });
  if (check.status !== 0) throw new Error(`promtool check config: ${check.stdout}${check.stderr}`);
  const port = freePort();
  const url = `http://127.0.0.1:${port}`;
  let out = "";
  const child: ChildProcess = spawn(
    PROMETHEUS,
    [`--config.file=${config}`, `--storage.tsdb.path=${join(dir, "data")}`, `--web.listen-address=127.0.0.1:${port}`, "--log.level=warn"],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  child.stdout?.on("data", (d) => (out += d));
  child.stderr?.on("data", (d) => (out += d));
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  const stop = async () => {
    if (child.exitCode === null) child.kill("SIGKILL");
    await exited;
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await until(
      "prometheus to be ready",
      async () => {
        if (child.exitCode !== null) throw new Error(`prometheus exited ${child.exitCode}: ${out.slice(-2000)}`);
        return (await fetch(`${url}/-/ready`).catch(() => undefined))?.status === 200;
      },
      20_000,
    );
  } catch (e) {
    await stop();
    throw e;
  }
  return {
    url,
    async query(expr) {
      const res = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(expr)}`);
      const body = (await res.json()) as {
        status: string;
        error?: string;
        data?: { resultType: string; result: { metric: Record<string, string>; value: [number, string] }[] };
      };
      if (body.status !== "success") throw new Error(`query ${expr}: ${body.error}`);
      return body.data!.result;
    },
    logs: () => out,
    stop,
  };
}

/**
 * Upstream kubelet counters whose names lack "_total" (pkg/kubelet/metrics): promtool's lint flags them
 * on a Go kubelet too, and dashboards and alerts query them by these names, so bunlet keeps them.
 */
export const UPSTREAM_COUNTERS_WITHOUT_TOTAL = [
  "kubelet_evictions",
  "kubelet_pleg_discard_events",
  "kubelet_preemptions",
  "kubelet_certificate_manager_client_expiration_renew_errors",
  "kubelet_server_expiration_renew_errors",
];

/** `promtool check metrics` on an exposition; returns its complaints ("" when clean), upstream's names excepted. */
export function promtoolCheckMetrics(text: string): string {
  const r = spawnSync(PROMTOOL, ["check", "metrics"], { input: text, encoding: "utf8" });
  if (r.status === 0) return "";
  const upstream = new Set(UPSTREAM_COUNTERS_WITHOUT_TOTAL.map((n) => `${n} counter metrics should have "_total" suffix`));
  const problems = `${r.stdout}${r.stderr}`
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l && !upstream.has(l));
  return problems.join("\n");
}
