// Which fields, set in a config file, bunlet says it ignores: the ACTED_ON_FIELDS list must follow
// what the agent really does. The truth is derived from the code: a field (or node flag) the agent
// reads — `.<name>` anywhere in src/ outside src/config/, which defines, defaults and validates them
// all — must be labelled acted on in `--help` and the warnings, and one labelled acted on must be read.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Glob } from "bun";
import { KUBELET_FLAGS } from "../../src/config/flags.ts";
import { ACTED_ON_FIELDS, ACTED_ON_SUBFIELDS } from "../../src/config/acted-on.ts";
import { FIELD_GO_KIND } from "../../src/config/kubelet-config.ts";
import { loadConfig } from "../../src/config/load.ts";

const dir = mkdtempSync(join(tmpdir(), "bunlet-acted-on-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const warningsFor = async (yaml: string) => {
  const p = join(dir, `c${n++}.yaml`);
  writeFileSync(p, `apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n${yaml}`);
  return (await loadConfig(["--config", p])).warnings.filter((w) => w.includes("does not act on"));
};

describe("ACTED_ON_FIELDS", () => {
  test.each([["registryPullQPS: 3\n", "registryPullQPS"]])("not acted on yet, warns: %s", async (yaml, field) => {
    expect((await warningsFor(yaml)).map((w) => w.split(" ")[0])).toEqual([field]);
  });

  test.each([
    "podLogsDir: /var/log/pods\n",
    "oomScoreAdj: -500\n",
    "runtimeRequestTimeout: 1m\n",
    "containerLogMonitorInterval: 20s\n",
    "maxPods: 10\n",
    "nodeStatusUpdateFrequency: 20s\nnodeStatusReportFrequency: 1m\nnodeLeaseDurationSeconds: 30\nregisterNode: false\nkubeAPIQPS: 10\nkubeAPIBurst: 20\n",
    "failSwapOn: false\n",
    "memorySwap:\n  swapBehavior: LimitedSwap\n",
    "imageGCHighThresholdPercent: 90\nimageGCLowThresholdPercent: 70\nimageMinimumGCAge: 5m\n",
    "volumeStatsAggPeriod: 30s\n",
  ])("acted on, no warning: %s", async (yaml) => {
    expect(await warningsFor(yaml)).toEqual([]);
  });
});

describe("acted-on labels follow the code", () => {
  const SRC = new URL("../../src/", import.meta.url).pathname;
  const sources = [...new Glob("**/*.ts").scanSync(SRC)].filter((f) => !f.startsWith("config/")).map((f) => ({ f, text: readFileSync(SRC + f, "utf8") }));
  const readers = (name: string) => sources.filter(({ text }) => new RegExp(`\\.${name}\\b`).test(text)).map(({ f }) => f);
  // Acted on inside src/config itself (decoding), not read elsewhere as a property.
  const ACTED_IN_CONFIG = new Set(["apiVersion", "kind"]);
  const NODE_FLAGS_ACTED_IN_CONFIG = new Set(["configDir", "help"]);

  test("every KubeletConfiguration field the agent reads is acted on", () => {
    const wrong = Object.keys(FIELD_GO_KIND)
      .filter((f) => !ACTED_ON_FIELDS.has(f) && !ACTED_ON_SUBFIELDS[f as keyof typeof ACTED_ON_SUBFIELDS])
      .map((f) => [f, readers(f)] as const)
      .filter(([, r]) => r.length > 0);
    expect(wrong).toEqual([]);
  });

  test("every field labelled acted on is read by the agent", () => {
    expect([...ACTED_ON_FIELDS].filter((f) => !ACTED_IN_CONFIG.has(f) && readers(f).length === 0)).toEqual([]);
  });

  test("--help labels each node flag by whether the agent reads it", () => {
    const wrong = KUBELET_FLAGS.filter((s) => s.nodeFlag && !NODE_FLAGS_ACTED_IN_CONFIG.has(s.nodeFlag))
      .filter((s) => s.actedOn !== readers(s.nodeFlag!).length > 0)
      .map((s) => `--${s.name} labelled ${s.actedOn ? "acted on" : "not acted on"}`);
    expect(wrong).toEqual([]);
  });

  test.each(["tls-cert-file", "enable-debugging-handlers", "cpu-cfs-quota", "bootstrap-kubeconfig"])("--%s is labelled acted on", (name) => {
    expect(KUBELET_FLAGS.find((s) => s.name === name)?.actedOn).toBe(true);
  });
});
