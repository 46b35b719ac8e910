// `bunlet eviction simulate|explain` end to end: in-process through the exported runners with
// captured stdout/stderr, and once as a separate process through citty.
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { runExplain, runSimulate, type CliIO } from "../../src/cli/eviction.ts";

const F = join(import.meta.dir, "../fixtures/eviction");
const f = (name: string) => join(F, name);

async function run(fn: typeof runSimulate, args: string[]) {
  let stdout = "";
  let stderr = "";
  const io: CliIO = { stdout: (s) => void (stdout += s), stderr: (s) => void (stderr += s) };
  const code = await fn(args, io);
  return { code, stdout, stderr };
}

const memArgs = ["--pods", f("memory-pods.json"), "--summary", f("memory-s1.json"), "--summary", f("memory-s2.json"), "--summary", f("memory-s3.json")];

describe("eviction simulate", () => {
  test("three steps with the default thresholds: no pressure, hard pressure, the next victim", async () => {
    const { code, stdout, stderr } = await run(runSimulate, [...memArgs, "--admit", f("candidates.json")]);
    expect(code).toBe(0);
    const out = JSON.parse(stdout);
    // Linux defaults (5) + the allocatable copy; percentages as fractions; quantities as bytes.
    expect(out.thresholds).toContainEqual({
      signal: "nodefs.available",
      operator: "LessThan",
      value: { percentage: 0.1 },
      gracePeriodSeconds: 0,
      minReclaim: null,
    });
    expect(out.thresholds).toContainEqual({
      signal: "allocatableMemory.available",
      operator: "LessThan",
      value: { quantity: 104857600 },
      gracePeriodSeconds: 0,
      minReclaim: null,
    });
    expect(out.steps).toHaveLength(3);
    const [s1, s2, s3] = out.steps;
    expect(s1.time).toBe("2024-05-01T10:00:00.000Z");
    expect(s1.thresholdsMet).toEqual([]);
    expect(s1.reclaim).toBeNull();
    expect(s1.ranked).toEqual([]);
    expect(s1.evicted).toBeNull();
    expect(s1.admission["default/new-besteffort"]).toEqual({ admit: true, reason: "", message: "" });

    expect(s2.observations["memory.available"]).toEqual({ available: 83886080, capacity: 83886080 + 6 * 1024 ** 3 });
    expect(s2.thresholdsMet).toEqual(["memory.available"]);
    expect(s2.nodeConditions).toEqual(["MemoryPressure"]);
    expect(s2.reclaim).toEqual({ signal: "memory.available", resource: "memory" });
    expect(s2.ranked).toEqual(["kube-system/static-web", "default/hog", "default/burst", "kube-system/apiserver", "default/guar"]);
    expect(s2.evicted).toEqual({
      pod: "default/hog",
      gracePeriodSeconds: 1,
      message:
        "The node was low on resource: memory. Threshold quantity: 100Mi, available: 80Mi. Container main was using 900Mi, request is 0, has larger consumption of memory. ",
      annotations: { offending_containers: "main", offending_containers_usage: "900Mi", starved_resource: "memory" },
    });
    expect(s2.admission).toEqual({
      "default/new-besteffort": { admit: false, reason: "Evicted", message: "The node had condition: [MemoryPressure]. " },
      "default/new-burstable": { admit: true, reason: "", message: "" },
      "default/new-tolerant": { admit: true, reason: "", message: "" },
    });
    // The evicted pod is gone from the active set; the next pod follows.
    expect(s3.ranked).not.toContain("default/hog");
    expect(s3.evicted.pod).toBe("default/burst");
    // Decision log on stderr, one line per decision.
    expect(stderr).toContain("evicting pod=default/hog signal=memory.available observed=80Mi threshold=100Mi rank=2/5 qos=BestEffort");
  });

  test("config file: soft threshold with grace, max pod grace, flags override the file", async () => {
    const { code, stdout } = await run(runSimulate, [...memArgs, "--config", f("soft-config.yaml"), "--output", "json", "--quiet"]);
    expect(code).toBe(0);
    const out = JSON.parse(stdout);
    expect(out.thresholds.map((t: { signal: string; gracePeriodSeconds: number }) => `${t.signal}/${t.gracePeriodSeconds}`).sort()).toEqual([
      "allocatableMemory.available/0",
      "memory.available/0",
      "memory.available/10",
    ]);
    // s2 (t=10): soft met, in grace; hard (50Mi) not met → nothing evicted but MemoryPressure reported.
    expect(out.steps[1].thresholdsMet).toEqual(["memory.available"]);
    expect(out.steps[1].nodeConditions).toEqual(["MemoryPressure"]);
    expect(out.steps[1].evicted).toBeNull();
    // s3 (t=20): soft grace (10 s since t=10) passed → soft eviction with min(20, TGPS unset) = 20.
    expect(out.steps[2].evicted).toMatchObject({ pod: "default/hog", gracePeriodSeconds: 20 });

    const flags = await run(runSimulate, [...memArgs, "--config", f("soft-config.yaml"), "--eviction-hard", "memory.available<85Mi", "--quiet"]);
    expect(JSON.parse(flags.stdout).steps[1].evicted.pod).toBe("default/hog");
  });

  test("evict-static-pods lets the static hog go first", async () => {
    const { stdout } = await run(runSimulate, [...memArgs, "--evict-static-pods", "--quiet"]);
    expect(JSON.parse(stdout).steps[1].evicted.pod).toBe("kube-system/static-web");
  });

  test("text output", async () => {
    const { code, stdout } = await run(runSimulate, [...memArgs, "--output", "text", "--quiet"]);
    expect(code).toBe(0);
    expect(stdout).toContain("step 2 at 2024-05-01T10:00:10.000Z");
    expect(stdout).toContain("  evicted: default/hog grace=1s: The node was low on resource: memory.");
    expect(stdout).toContain("  conditions: MemoryPressure");
  });

  test("the real kubelet fixtures (minikube summary joined to /pods by UID)", async () => {
    const args = ["--pods", f("real-pods.json"), "--summary", f("real-stats-summary.json"), "--quiet"];
    const calm = JSON.parse((await run(runSimulate, args)).stdout);
    expect(calm.steps[0].thresholdsMet).toEqual([]);
    expect(calm.steps[0].observations["pid.available"]).toEqual({ available: 32330, capacity: 32768 });
    expect(calm.steps[0].observations["memory.available"]).toEqual({ available: 2620624896, capacity: 2620624896 + 1234567890 });
    const pressed = JSON.parse((await run(runSimulate, [...args, "--eviction-hard", "memory.available<3Gi"])).stdout);
    const step = pressed.steps[0];
    expect(step.ranked).toHaveLength(9);
    expect(step.ranked[0]).toBe("kube-system/kube-apiserver-minikube"); // largest working set, no request
    expect(step.ranked.at(-1)).toBe("kube-system/kube-scheduler-minikube"); // Guaranteed via limits, under request
    expect(step.evicted.pod).toBe("kube-system/kube-apiserver-minikube");
    expect(step.evicted.message).toBe("The node was low on resource: memory. Threshold quantity: 3Gi, available: 2559204Ki. ");
  });

  test.each([
    [
      ["--eviction-hard", "memory.available<-1Gi"],
      'invalid --eviction-hard value "-1Gi" for memory.available: eviction threshold memory.available must be positive: -1Gi',
    ],
    [["--eviction-hard", "memory.available=1Gi"], 'for "--eviction-hard" flag: malformed pair, expect string<string'],
    [["--eviction-soft", "memory.available<1Gi"], "grace period must be specified for the soft eviction threshold memory.available"],
    [["--eviction-hard", "swap.available<1Gi"], "unsupported eviction signal swap.available"],
    [["--eviction-max-pod-grace-period", "soon"], "--eviction-max-pod-grace-period"],
    [["--bogus", "1"], "unknown flag: --bogus"],
  ])("invalid flags %p → exit 1 with %s", async (extra, text) => {
    const { code, stdout, stderr } = await run(runSimulate, [...memArgs, ...extra]);
    expect(code).toBe(1);
    expect(stdout).toBe("");
    expect(stderr).toContain(text);
  });

  test.each([
    [
      ["--pods", f("memory-pods.json"), "--summary", f("bad-summary.json")],
      "bad-summary.json: field node.memory.availableBytes: Invalid input: expected number",
    ],
    [["--pods", f("bad-pods.json"), "--summary", f("memory-s1.json")], "bad-pods.json: field items[0].spec.containers[0].resources.requests.memory"],
    [["--pods", f("memory-pods.json"), "--summary", f("missing.json")], "cannot read summary"],
    [["--pods", f("memory-pods.json"), "--summary", f("soft-config.yaml")], "soft-config.yaml: invalid JSON"],
    [["--pods", f("memory-pods.json")], "at least one --summary"],
    [["--summary", f("memory-s1.json")], "--pods PODS.json is required"],
  ])("bad input %p names the file and field", async (args, text) => {
    const { code, stderr } = await run(runSimulate, args);
    expect(code).toBe(1);
    expect(stderr).toContain(text);
  });

  test("as a process through citty: JSON on stdout, exit 0; bad threshold exits non-zero", async () => {
    const script =
      'import cmd from "./src/cli/eviction.ts"; import { runMain } from "citty"; await runMain(cmd, { rawArgs: JSON.parse(process.env.EVICTION_ARGS) });';
    const root = join(import.meta.dir, "../..");
    const spawn = (args: string[]) =>
      Bun.spawnSync([process.execPath, "-e", script], { cwd: root, env: { ...process.env, EVICTION_ARGS: JSON.stringify(args) } });
    const ok = spawn(["simulate", "--pods", f("memory-pods.json"), "--summary", f("memory-s2.json"), "--quiet"]);
    expect(ok.exitCode).toBe(0);
    expect(JSON.parse(ok.stdout.toString()).steps[0].evicted.pod).toBe("default/hog");
    const bad = spawn(["simulate", "--pods", f("memory-pods.json"), "--summary", f("memory-s2.json"), "--eviction-hard", "memory.available<0"]);
    expect(bad.exitCode).not.toBe(0);
    expect(bad.stderr.toString()).toContain("must be positive: 0");
  });
});

describe("eviction explain", () => {
  test("from files: observations, thresholds, grace state, ranking and the next victim", async () => {
    const { code, stdout } = await run(runExplain, [
      "--pods",
      f("memory-pods.json"),
      "--summary",
      f("memory-s2.json"),
      "--config",
      f("soft-config.yaml"),
      "--output",
      "json",
    ]);
    expect(code).toBe(0);
    const x = JSON.parse(stdout);
    expect(x.node).toBe("sim-node");
    expect(x.nodeConditions).toEqual(["MemoryPressure"]);
    const soft = x.thresholds.find((t: { gracePeriodSeconds: number }) => t.gracePeriodSeconds === 10);
    expect(soft).toMatchObject({ met: true, actionable: false, graceRemainingSeconds: 10, amountText: "500Mi" });
    expect(x.reclaim).toBeNull();
    expect(x.rankedFor).toBe("memory.available");
    expect(x.ranked[0]).toMatchObject({ pod: "kube-system/static-web", exempt: true, qos: "BestEffort" });
    expect(x.nextEviction).toBeNull();
  });
  test("text report names the victim and why", async () => {
    const { code, stdout } = await run(runExplain, ["--pods", f("memory-pods.json"), "--summary", f("memory-s2.json")]);
    expect(code).toBe(0);
    expect(stdout).toContain("memory.available < 100Mi (hard) = 100Mi: MET, actionable");
    expect(stdout).toContain("next eviction: default/hog grace=1s");
    expect(stdout).toContain("why: The node was low on resource: memory. Threshold quantity: 100Mi, available: 80Mi.");
  });
  test("an unreachable agent is a clear error", async () => {
    const { code, stderr } = await run(runExplain, ["--server", "http://127.0.0.1:1", "--pods", f("memory-pods.json")]);
    expect(code).toBe(1);
    expect(stderr).toContain("cannot reach http://127.0.0.1:1/stats/summary");
  });
});

describe("simulate: hand-written summaries", () => {
  test("sections without sample times are accepted; steps then advance 10 s each", async () => {
    const { mkdtempSync, writeFileSync, rmSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const dir = mkdtempSync(join(tmpdir(), `bunlet-evsim-${process.pid}-`));
    try {
      const pods = [{ metadata: { name: "a", namespace: "x", uid: "ua" }, spec: { containers: [{ name: "c" }] } }];
      const s = (avail: number) => ({
        node: { nodeName: "n", rlimit: { maxpid: 1000, curproc: 1000 - avail } },
        pods: [{ podRef: { name: "a", namespace: "x", uid: "ua" }, process_stats: { process_count: 7 } }],
      });
      writeFileSync(join(dir, "pods.json"), JSON.stringify(pods));
      writeFileSync(join(dir, "s1.json"), JSON.stringify(s(500)));
      writeFileSync(join(dir, "s2.json"), JSON.stringify(s(50)));
      const { code, stdout, stderr } = await run(runSimulate, [
        "--pods",
        join(dir, "pods.json"),
        "--summary",
        join(dir, "s1.json"),
        "--summary",
        join(dir, "s2.json"),
        "--eviction-hard",
        "pid.available<100",
        "--quiet",
      ]);
      expect(stderr).toBe("");
      expect(code).toBe(0);
      const out = JSON.parse(stdout);
      expect(out.steps.map((x: { time: string }) => x.time)).toEqual(["1970-01-01T00:00:10.000Z", "1970-01-01T00:00:20.000Z"]);
      expect(out.steps[1].nodeConditions).toEqual(["PIDPressure"]);
      expect(out.steps[1].evicted.message).toBe("The node was low on resource: pids. Threshold quantity: 100, available: 50. ");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("eviction explain against a running agent", () => {
  test("reads /pods, /stats/summary and the agent's eviction settings from /configz", async () => {
    const pods = await Bun.file(f("memory-pods.json")).text();
    const s2 = await Bun.file(f("memory-s2.json")).text();
    const server = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch(req) {
        const path = new URL(req.url).pathname;
        if (path === "/pods") return new Response(pods, { headers: { "content-type": "application/json" } });
        if (path === "/stats/summary") return new Response(s2, { headers: { "content-type": "application/json" } });
        if (path === "/configz") return Response.json({ kubeletconfig: { evictionHard: { "memory.available": "70Mi" }, enforceNodeAllocatable: ["pods"] } });
        return new Response("not found", { status: 404 });
      },
    });
    try {
      const url = `http://127.0.0.1:${server.port}`;
      const { code, stdout, stderr } = await run(runExplain, ["--server", url, "--output", "json"]);
      expect(stderr).toBe("");
      expect(code).toBe(0);
      const x = JSON.parse(stdout);
      // The agent's 70Mi threshold (from /configz), not the 100Mi default: 80Mi available is fine.
      expect(x.thresholds.map((t: { signal: string; amountText: string }) => `${t.signal}=${t.amountText}`)).toEqual([
        "memory.available=70Mi",
        "allocatableMemory.available=70Mi",
      ]);
      expect(x.nodeConditions).toEqual([]);
      expect(x.nextEviction).toBeNull();
      // Flags on the command line replace /configz.
      const withFlags = JSON.parse((await run(runExplain, ["--server", url, "--output", "json", "--eviction-hard", "memory.available<90Mi"])).stdout);
      expect(withFlags.nextEviction.pod).toBe("default/hog");
    } finally {
      server.stop(true);
    }
  });
});

describe("live explain", () => {
  test("explainLive shows the real grace clock and in-flight kills; the CLI prefers /debug/eviction", async () => {
    const { createEvictionManager } = await import("../../src/eviction/manager.ts");
    const { explainLive } = await import("../../src/eviction/explain.ts");
    const { createManualClock } = await import("../../src/manual-clock.ts");
    const { evictionConfig } = await import("../../src/eviction/types.ts");
    const { silent } = await import("./harness.ts");
    const { atMs, Gi, Mi, pod, podStats, summary, thresholds } = await import("./helpers.ts");
    const hog = pod("hog");
    const clock = createManualClock(atMs(0));
    const config = evictionConfig({
      thresholds: thresholds({ evictionHard: {}, evictionSoft: { "memory.available": "1Gi" }, evictionSoftGracePeriod: { "memory.available": "1m" } }),
      maxPodGracePeriodSeconds: 30,
    });
    const m = createEvictionManager({
      config,
      clock,
      logger: silent,
      summary: async () => summary({ time: new Date(clock.now()).toISOString(), memAvailable: 500 * Mi, pods: [podStats(hog, { memory: Gi })] }),
      activePods: () => [hog],
      killPod: () => new Promise<void>(() => {}),
    });
    await m.synchronize();
    clock.set(atMs(20));
    await m.synchronize();
    const x = explainLive(m, [hog], config, atMs(20))!;
    expect(x.mode).toBe("live");
    expect(x.thresholds[0]).toMatchObject({ signal: "memory.available", met: true, actionable: false, graceRemainingSeconds: 40 });
    expect(x.nextEviction).toBeNull();
    clock.set(atMs(60));
    await m.synchronize(); // grace passed: hog is evicted with min(30, unset TGPS) = 30 s, and the kill hangs
    const y = explainLive(m, [hog], config, atMs(65))!;
    expect(y.lastEviction?.pod).toBe("default/hog");
    expect(y.inFlight).toEqual([{ pod: "default/hog", gracePeriodSeconds: 30, startedSecondsAgo: 5, finished: false }]);

    const server = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch: (req) => (new URL(req.url).pathname === "/debug/eviction" ? Response.json(y) : new Response("", { status: 404 })),
    });
    try {
      const { code, stdout } = await run(runExplain, ["--server", `http://127.0.0.1:${server.port}`]);
      expect(code).toBe(0);
      expect(stdout).toContain("live state of node test-node");
      expect(stdout).toContain("eviction in flight: default/hog grace=30s started 5s ago");
      expect(stdout).toContain("last eviction: default/hog grace=30s: The node was low on resource: memory.");
    } finally {
      server.stop(true);
    }
  });
});
