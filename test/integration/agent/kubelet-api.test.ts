// The kubelet API of the whole node agent on a private containerd: a pod that prints a line every
// 200 ms; /containerLogs (plain and follow), /runningpods/ and /metrics/resource read it back over
// HTTP. Skipped when containerd cannot run here (not root).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Pod } from "../../../src/pod/types.ts";
import { canRunContainerd } from "../../support/containerd.ts";
import { staticPodYaml } from "../../support/manifests.ts";
import { parsePromText } from "../../support/prom-text.ts";
import { startStandaloneNode, type StandaloneNode } from "../../support/standalone.ts";
import { until } from "../../support/wait.ts";

const PID = process.pid;
const CGROUP_ROOT = `/bunlet-api-${PID}`;
const BASE = `/tmp/bunlet-api-${PID}`;
const NODE = "apitest";

describe.skipIf(!canRunContainerd())("kubelet API on containerd", () => {
  let node: StandaloneNode;
  let base: string;

  beforeAll(async () => {
    const loop = ["sh", "-c", "i=0; while true; do echo line $i; i=$((i+1)); sleep 0.2; done"];
    node = await startStandaloneNode({
      base: BASE,
      cgroupRoot: CGROUP_ROOT,
      node: NODE,
      // Standalone, plain loopback: the handlers under test are opted in.
      flags: ["--unsafe-loopback-debug-handlers"],
      prepare: ({ ctd, manifests }) =>
        writeFileSync(join(manifests, "talker.yaml"), staticPodYaml("talker", { image: ctd.images.busybox, command: loop, terminationGracePeriodSeconds: 1 })),
    });
    base = node.url;
  }, 600_000);

  afterAll(async () => {
    await node?.stop();
  }, 120_000);

  test("containerLogs, follow, runningpods and metrics/resource read the running pod", async () => {
    const pod = await until("talker Running", async () => {
      const items = ((await (await fetch(`${base}/pods`)).json()) as { items: Pod[] }).items;
      const p = items.find((x) => x.metadata.name === `talker-${NODE}`);
      return p?.status?.phase === "Running" ? p : undefined;
    });
    const logs = `${base}/containerLogs/${pod.metadata.namespace}/${pod.metadata.name}/main`;
    const text = await until("three lines logged", async () => {
      const t = await (await fetch(logs)).text();
      return t.split("\n").length > 3 ? t : undefined;
    });
    expect(text).toStartWith("line 0\nline 1\n");
    expect(await (await fetch(`${logs}?tailLines=1`)).text()).toMatch(/^line \d+\n$/);

    const res = await fetch(`${logs}?follow=true&tailLines=1`);
    const reader = res.body!.getReader();
    let got = "";
    while (got.split("\n").length < 4) got += new TextDecoder().decode((await reader.read()).value);
    await reader.cancel();
    const nums = got
      .trim()
      .split("\n")
      .map((l) => Number(l.split(" ")[1]));
    expect(nums.slice(1)).toEqual(nums.slice(1).map((_, i) => nums[0]! + i + 1));

    const running = (await (await fetch(`${base}/runningpods/`)).json()) as {
      items: { metadata: { name: string }; spec: { containers: { name: string }[] } }[];
    };
    expect(running.items.find((p) => p.metadata.name === pod.metadata.name)?.spec.containers.map((c) => c.name)).toEqual(["main"]);

    const metrics = await until("container metrics", async () => {
      const f = parsePromText(await (await fetch(`${base}/metrics/resource`)).text());
      return f.get("container_memory_working_set_bytes")?.samples.some((s) => s.labels.pod === pod.metadata.name) ? f : undefined;
    });
    expect(metrics.get("resource_scrape_error")!.samples[0]!.value).toBe(0);
    expect(metrics.get("node_cpu_usage_seconds_total")!.samples[0]!.value).toBeGreaterThan(0);
  }, 120_000);
});
