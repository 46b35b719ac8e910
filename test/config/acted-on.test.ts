// Which fields, set in a config file, bunlet says it ignores: the ACTED_ON_FIELDS list must follow
// what the agent really does.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
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
  test.each([
    ["shutdownGracePeriod: 30s\n", "shutdownGracePeriod"],
  ])("not acted on yet, warns: %s", async (yaml, field) => {
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
    "imageGCHighThresholdPercent: 90\nimageGCLowThresholdPercent: 70\nimageMinimumGCAge: 5m\n",
  ])("acted on, no warning: %s", async (yaml) => {
    expect(await warningsFor(yaml)).toEqual([]);
  });
});
