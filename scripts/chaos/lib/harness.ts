// The scenario harness: one throw-away bunlet node (temp root dir, manifests dir, trace file,
// cgroupRoot /bunlet-chaos-<pid>-<n> with a memory limit) on a private containerd; start/restart/kill
// dist/bunlet, watch /pods, /debug/eviction, the trace, its log and cgroup files, record checks, and
// an idempotent cleanup of everything it created. cgroup v1 or v2, cgroupfs or systemd driver
// (./cgroups.ts): with the systemd driver bunlet makes kubepods.slice at the top (no cgroupRoot, no
// harness fence: run it in a throw-away host such as the v2 guest) and cleanup stops that slice.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createCriClient, type CriClient } from "../../../src/cri/client.ts";
import { ensureBuilt, freePort, spawnBunlet, type BunletProcess } from "../../../test/support/binary.ts";
import {
  acquireContainerd,
  removeSandbox,
  runtimeInstanceEnv,
  runtimeSocket,
  testRuntimeScript,
  type TestContainerd,
} from "../../../test/support/containerd.ts";
import {
  cgroupDir,
  detectLayout,
  kubepodsDir,
  memoryLimitBytes,
  memoryLimitCounters,
  memoryUsageBytes,
  podDir,
  workingSetBytes,
  type MemoryLimitCounters,
} from "./cgroups.ts";
import { memTotalBytes, MIB, removeCgroupTree } from "./host.ts";
import { isRunning, podManifest, type ChaosImages, type PodSpecInput, type PodView, type TraceRecord } from "./pods.ts";
import { until } from "../../../test/support/wait.ts";
import { removeTree } from "../../../test/support/remove-tree.ts";

const HOST_SCRIPTS = resolve(import.meta.dir, "../../host");

/** What a scenario needs from the runtime: the private containerd and the image names. */
export interface ChaosRuntime {
  endpoint: string;
  cri: CriClient;
  /** containerd's root (imagefs). */
  root: string;
  images: ChaosImages;
}

export interface Check {
  name: string;
  ok: boolean;
  detail?: string;
}

export interface StartOptions {
  /** KubeletConfiguration fields (merged over the harness's base). */
  config?: Record<string, unknown>;
  /** Node allocatable memory: kubepods gets this limit (systemReserved = MemTotal − this). */
  allocatableBytes: number;
  extraArgs?: string[];
  /** Environment variables for the agent, over this process's (e.g. BUNLET_NOTIFIER_THREAD_EVICTION: "0"). */
  env?: Record<string, string>;
  /** --root-dir (nodefs); default <scenario dir>/root. */
  rootDir?: string;
  /** Wait until these manifests' pods are Running (default: every manifest written so far). */
  waitRunning?: string[];
}

let seq = 0;

/**
 * How much slower than the reference host this one is (BUNLET_CHAOS_TIME_SCALE, default 1): every
 * wait of the harness and of the scenarios, and the scenario bound, is multiplied by it. A slow host
 * (the v2 guest: one CPU, slow syscalls) gets more time, never different steps.
 */
export function chaosTimeScale(env: Record<string, string | undefined> = process.env): number {
  const raw = env.BUNLET_CHAOS_TIME_SCALE;
  if (raw === undefined || raw === "") return 1;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 1) throw new Error(`BUNLET_CHAOS_TIME_SCALE=${JSON.stringify(raw)}: want a number ≥ 1`);
  return n;
}

export type Harness = ReturnType<typeof createHarness>;

/**
 * `agentCommand`: how to start the agent instead of dist/bunlet (its flags are appended), e.g. the arm64
 * binary under scripts/host/arm64.sh.
 */
export function createHarness(name: string, verbose: boolean, agentCommand?: readonly string[]) {
  const n = ++seq;
  const tag = `${process.pid}-${n}`;
  const dir = mkdtempSync(join(tmpdir(), `bunlet-chaos-${name}-${tag}-`));
  const nodeName = `chaos-${tag}`;
  const layout = detectLayout(`/bunlet-chaos-${tag}`);
  const cgroupRoot = layout.cgroupRoot;
  const systemd = layout.driver === "systemd";
  /** Set once this harness's bunlet ran with the systemd driver: cleanup stops kubepods.slice. */
  let madeKubepodsSlice = false;
  const manifestsDir = join(dir, "manifests");
  const rootDir = join(dir, "root");
  const tracePath = join(dir, "eviction-trace.jsonl");
  const configPath = join(dir, "kubelet.yaml");
  mkdirSync(manifestsDir);
  mkdirSync(rootDir);
  const checks: Check[] = [];
  /** What a reader of the result must know about how the scenario ran (not a check). */
  const notes: string[] = [];
  const logs: string[] = [];
  const mounts: string[] = [];
  const cleanups: (() => Promise<void> | void)[] = [];
  let runtime: ChaosRuntime | undefined;
  let shared: TestContainerd | undefined;
  let bunlet: BunletProcess | undefined;
  let port = 0;
  let lastStart: StartOptions | undefined;
  const t0 = performance.now();
  /** The token the harness presents to a bunlet serving securely (API-server mode); undefined: plain HTTP. */
  let bearer: string | undefined;
  const get = (path: string) =>
    fetch(`${h.baseUrl()}${path}`, bearer ? { headers: { authorization: `Bearer ${bearer}` }, tls: { rejectUnauthorized: false } } : {});

  const say = (msg: string) => {
    const line = `[${((performance.now() - t0) / 1000).toFixed(2).padStart(6)}s] ${msg}`;
    logs.push(line);
    if (verbose) console.log(line);
  };

  const h = {
    name,
    dir,
    nodeName,
    cgroupRoot,
    layout,
    manifestsDir,
    rootDir,
    tracePath,
    say,
    get runtime(): ChaosRuntime {
      if (!runtime) throw new Error("no container runtime yet: call h.useSharedContainerd() or h.usePrivateContainerd()");
      return runtime;
    },
    get images() {
      return h.runtime.images;
    },
    get port() {
      return port;
    },
    get bunlet() {
      return bunlet;
    },

    /** The process-wide private containerd of test/support (refcounted, destroyed on the last release). */
    async useSharedContainerd(): Promise<ChaosRuntime> {
      shared = await acquireContainerd();
      runtime = { endpoint: shared.endpoint, cri: shared.cri, root: shared.root, images: shared.images };
      return runtime;
    },

    /** A runtime of its own (the tests' runtime: containerd or CRI-O) with its root under `root` (e.g. on a small tmpfs), destroyed at cleanup. */
    async usePrivateContainerd(root: string): Promise<ChaosRuntime> {
      const dirOf = `/run/bunlet/chaos-${tag}`;
      const env = {
        ...process.env,
        ...runtimeInstanceEnv(dirOf, root),
        BUNLET_CNI_BRIDGE: `bch${tag}`.replace(/-/g, "").slice(0, 15),
        BUNLET_CNI_SUBNET: `10.88.${((process.pid + n) % 200) + 20}.0/24`,
      };
      const sh = (cmd: string) => spawnSync("bash", [testRuntimeScript, cmd], { env, encoding: "utf8", timeout: 120_000 });
      cleanups.push(() => {
        runtime?.cri.close();
        const r = sh("destroy");
        if (r.status !== 0) throw new Error(`${testRuntimeScript} destroy: ${r.stderr}`);
      });
      const setup = spawnSync("bash", [join(HOST_SCRIPTS, "setup.sh")], { encoding: "utf8", timeout: 600_000 });
      if (setup.status !== 0) throw new Error(`scripts/host/setup.sh failed: ${setup.stderr}`);
      const r = sh("start");
      if (r.status !== 0) throw new Error(`${testRuntimeScript} start failed: ${r.stderr}${r.stdout}`);
      const endpoint = `unix://${runtimeSocket(dirOf)}`;
      runtime = {
        endpoint,
        cri: createCriClient({ endpoint, timeoutMs: 30_000 }),
        root,
        images: { busybox: "bunlet.local/busybox:1", pause: "bunlet.local/pause:1", memhog: "bunlet.local/memhog:1" },
      };
      return runtime;
    },

    /** A tmpfs of `sizeMiB` under the scenario dir, unmounted at cleanup. */
    mountTmpfs(sizeMiB: number, sub = "fs"): string {
      const p = join(dir, sub);
      mkdirSync(p, { recursive: true });
      const r = spawnSync("mount", ["-t", "tmpfs", "-o", `size=${sizeMiB}m`, `bunlet-chaos-${tag}`, p], { encoding: "utf8" });
      if (r.status !== 0) throw new Error(`mount tmpfs on ${p}: ${r.stderr}`);
      mounts.push(p);
      return p;
    },

    /** Writes manifests/<name>.yaml (JSON is YAML) for a static pod. */
    addPod(podName: string, spec: PodSpecInput): void {
      writeFileSync(join(manifestsDir, `${podName}.yaml`), JSON.stringify(podManifest(podName, spec, h.images), null, 2));
    },
    removePodManifest(podName: string): void {
      try {
        unlinkSync(join(manifestsDir, `${podName}.yaml`));
      } catch {}
    },
    manifestNames(): string[] {
      return readdirSync(manifestsDir)
        .filter((f) => f.endsWith(".yaml"))
        .map((f) => f.slice(0, -5));
    },
    /** The static pod's name on this node. */
    podName: (manifest: string) => `${manifest}-${nodeName}`,

    /** Writes the KubeletConfiguration and starts dist/bunlet; waits for /healthz and the pods. */
    async start(opts: StartOptions): Promise<void> {
      if (bunlet) throw new Error("bunlet already running");
      lastStart = opts;
      const total = memTotalBytes();
      if (systemd) {
        // kubepods.slice is the node's: a slice left by another kubelet is not ours to drive or stop.
        if (!madeKubepodsSlice && existsSync(kubepodsDir(layout)))
          throw new Error(
            `${kubepodsDir(layout)} exists before bunlet started: the systemd-driver chaos run needs a host without another kubelet's kubepods.slice`,
          );
        madeKubepodsSlice = true;
      } else {
        // The harness fence: the cgroupRoot limit, a little above allocatable (room for pod overhead
        // that upstream also leaves outside kubepods). Written before bunlet creates kubepods below it.
        const memRoot = cgroupDir(layout, "memory", []);
        mkdirSync(memRoot, { recursive: true });
        writeFileSync(join(memRoot, layout.version === 1 ? "memory.limit_in_bytes" : "memory.max"), String(opts.allocatableBytes + 128 * MIB));
      }
      const base: Record<string, unknown> = {
        apiVersion: "kubelet.config.k8s.io/v1beta1",
        kind: "KubeletConfiguration",
        staticPodPath: manifestsDir,
        fileCheckFrequency: "1s",
        containerRuntimeEndpoint: h.runtime.endpoint,
        cgroupDriver: layout.driver,
        cgroupRoot,
        address: "127.0.0.1",
        healthzBindAddress: "127.0.0.1",
        healthzPort: 0,
        readOnlyPort: 0,
        enforceNodeAllocatable: ["pods"],
        systemReserved: { memory: String(total - opts.allocatableBytes) },
        evictStaticPods: true,
        // Scenarios set evictionHard memory.available only (bunlet copies it onto
        // allocatableMemory.available, the kubepods signal; the host's own memory.available never
        // comes near it): one hard allocatable threshold, so one memcg notifier on kubepods.
        // The fast path: memcg threshold notifications (upstream default false).
        kernelMemcgNotification: true,
        evictionPressureTransitionPeriod: "2s",
      };
      const config = { ...base, ...opts.config };
      port ||= freePort();
      config.port = port;
      writeFileSync(configPath, JSON.stringify(config, null, 2));
      if (!agentCommand) await ensureBuilt();
      const args = [
        "--config",
        configPath,
        `--root-dir=${opts.rootDir ?? rootDir}`,
        `--hostname-override=${nodeName}`,
        `--eviction-trace=${tracePath}`,
        "--v=2",
        ...(opts.extraArgs ?? []),
      ];
      say(`starting ${agentCommand?.join(" ") ?? "dist/bunlet"} ${args.join(" ")}`);
      const p = spawnBunlet(args, { cwd: dir, env: opts.env, command: agentCommand });
      bunlet = p;
      void p.exited.then((code) => {
        logs.push(`--- bunlet pid ${p.pid} exited ${code}; stderr ---\n${p.stderr()}`);
        if (bunlet === p) bunlet = undefined;
      });
      await h.waitFor(
        "bunlet to answer /healthz",
        async () => {
          if (!bunlet) throw new Error(`bunlet exited before it was healthy:\n${p.stderr().slice(-4000)}`);
          try {
            return (await get("/healthz")).status === 200;
          } catch {
            return false;
          }
        },
        15_000,
      );
      await h.checkKubepodsLimit(opts.allocatableBytes);
      const want = opts.waitRunning ?? h.manifestNames();
      if (want.length) {
        await h.waitRunning(want);
        await h.checkPodMemoryStats(want);
      }
    },

    /** Check: bunlet fenced kubepods at node allocatable (memory.limit_in_bytes v1, memory.max v2). */
    async checkKubepodsLimit(allocatableBytes: number): Promise<void> {
      const dir = kubepodsDir(layout);
      // The directory (v2: with memory.max "max") appears before the manager writes the limit.
      const limit = await h
        .waitFor(`${dir} limited to allocatable`, () => memoryLimitBytes(layout.version, dir) === allocatableBytes, 20_000, 50)
        .then(
          () => allocatableBytes,
          () => memoryLimitBytes(layout.version, dir),
        );
      h.check(
        `kubepods memory limit = node allocatable (cgroup v${layout.version}, ${layout.driver})`,
        limit === allocatableBytes,
        `${dir}: ${limit ?? "none"} (allocatable ${allocatableBytes})`,
      );
    },

    /** Check: every one of these pods has memory stats (a working set) in /stats/summary. */
    async checkPodMemoryStats(manifests: string[]): Promise<void> {
      type SummaryPods = { pods?: { podRef: { name: string }; memory?: { workingSetBytes?: number } }[] };
      const missing = (s: SummaryPods | undefined) =>
        manifests.filter((m) => s?.pods?.find((p) => p.podRef.name === h.podName(m))?.memory?.workingSetBytes === undefined);
      let last: SummaryPods | undefined;
      await h
        .waitFor(
          "memory stats of every pod in /stats/summary",
          async () => {
            last = (await (await get("/stats/summary")).json().catch(() => undefined)) as SummaryPods | undefined;
            return missing(last).length === 0;
          },
          20_000,
          200,
        )
        .catch(() => undefined);
      const gone = missing(last);
      const ws = manifests.map((m) => `${m}=${last?.pods?.find((p) => p.podRef.name === h.podName(m))?.memory?.workingSetBytes ?? "-"}`);
      h.check(
        "every pod has memory stats in /stats/summary",
        gone.length === 0,
        gone.length ? `missing: ${gone.join(", ")}` : `workingSetBytes ${ws.join(" ")}`,
      );
    },

    /**
     * Waits until bunlet has armed its kernel notification on kubepods (the log line at --v=2): on
     * cgroup v1 the memcg threshold notifier ("memcg notifier armed description=…"), on v2 the
     * working-set watch, bunlet's v2 fast path ("working-set notifier armed description=…"). Both are
     * armed from the eviction manager's stats, refreshed every 10 s; the first refresh can run before
     * the kubepods cgroup exists, so a ramp started right away may only be seen by the periodic loop.
     * Not armed in time is an error on either version: scenarios that check the kernel trigger
     * (fast-ramp) require it.
     */
    async waitNotifierArmed(kind: "hard" | "soft" = "hard", timeoutMs = 15_000): Promise<void> {
      const which = layout.version === 1 ? "memcg" : "working-set";
      const re = new RegExp(`${which} notifier armed description="${kind} allocatable memory eviction threshold"`);
      await h.waitFor(`bunlet to arm its ${kind} allocatable ${which} notifier on kubepods`, () => re.test(bunlet?.stderr() ?? ""), timeoutMs, 100);
      say(`bunlet armed the ${kind} allocatable ${which} notifier on kubepods (cgroup v${layout.version})`);
    },

    /** Restarts with the last start options (same node, root dir, pods). */
    async restart(extraArgs?: string[]): Promise<void> {
      if (!lastStart) throw new Error("restart before start");
      await h.start({ ...lastStart, extraArgs: extraArgs ?? lastStart.extraArgs, waitRunning: [] });
    },

    /** Stops bunlet: SIGTERM (orderly) or SIGKILL (crash). Its pods keep running, as with the kubelet. */
    async stopBunlet(signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
      const p = bunlet;
      if (!p) return;
      say(`stopping bunlet pid ${p.pid} with ${signal}`);
      await p.stop(signal, 5000);
      bunlet = undefined;
    },

    /** bunlet's stderr across every run so far. */
    bunletLogs(): string {
      return logs.filter((l) => l.startsWith("--- bunlet")).join("\n") + (bunlet ? `\n${bunlet.stderr()}` : "");
    },

    async pods(): Promise<PodView[]> {
      const res = await get("/pods");
      if (res.status !== 200) throw new Error(`/pods answered ${res.status}`);
      const body = (await res.json()) as { items?: PodView[] };
      return body.items ?? [];
    },
    async pod(manifest: string): Promise<PodView | undefined> {
      return (await h.pods()).find((p) => p.metadata.name === h.podName(manifest));
    },
    async debugEviction(): Promise<Record<string, unknown>> {
      const res = await get("/debug/eviction");
      if (res.status !== 200) throw new Error(`/debug/eviction answered ${res.status}: ${await res.text()}`);
      return (await res.json()) as Record<string, unknown>;
    },
    /** http://127.0.0.1:<port> of the running bunlet's main server (https:// once serving securely). */
    baseUrl: () => `${bearer ? "https" : "http"}://127.0.0.1:${port}`,
    /**
     * bunlet with --kubeconfig serves TLS with authentication and authorization, as the kubelet: the
     * harness then asks over https (bunlet's self-signed certificate) with this bearer token.
     */
    authenticateWith(token: string): void {
      bearer = token;
    },
    async metrics(): Promise<string> {
      return await (await get("/metrics")).text();
    },

    async waitRunning(manifests: string[], timeoutMs = 30_000): Promise<Map<string, PodView>> {
      let last: PodView[] = [];
      try {
        await h.waitFor(
          `pods ${manifests.join(",")} Running`,
          async () => {
            last = await h.pods().catch(() => []);
            return manifests.every((m) => isRunning(last.find((p) => p.metadata.name === h.podName(m))));
          },
          timeoutMs,
        );
      } catch (e) {
        const phases = last.map((p) => `${p.metadata.name}=${p.status?.phase}`).join(" ");
        throw new Error(`${(e as Error).message} (pods: ${phases || "none"})`);
      }
      say(`pods Running: ${manifests.join(", ")}`);
      return new Map(manifests.map((m) => [m, last.find((p) => p.metadata.name === h.podName(m))!]));
    },

    /** Polls until `cond` returns a truthy value (returned); throws after `timeoutMs` × the host's time scale. */
    waitFor<T>(what: string, cond: () => T | Promise<T>, timeoutMs = 20_000, intervalMs = 50): Promise<NonNullable<T>> {
      return until(what, async () => ((await cond()) || undefined) as NonNullable<T> | undefined, timeoutMs * chaosTimeScale(), { intervalMs });
    },

    /**
     * Waits for a memory hog's ramp to bring memDir's working set to `lineBytes`, however fast the host
     * lets it go, and returns Date.now() at the first poll that saw it (or `done`'s value, which ends the
     * wait early: e.g. the eviction already happened). How fast a hog ramps is the host's business, not
     * bunlet's: its page faults are CPU work, and in the v2 guest (one slow UML CPU, where a page
     * fault costs ~100× native) a BestEffort hog gets what the harness, bunlet and containerd leave —
     * ~15–25 MiB/s instead of its 200–600 MiB/s, less on a loaded host. So there is no deadline on the
     * ramp: the wait fails only when usage has not grown by 1 MiB for `stallMs` × the time scale (the
     * hog is stuck or gone), or at the scenario bound. Cheap on purpose (one memory.current read per
     * poll; memory.stat only at the line) so the harness takes no CPU from the hog it waits for.
     */
    async waitRamp<T = number>(
      what: string,
      memDir: string,
      lineBytes: number,
      opts: { intervalMs?: number; stallMs?: number; done?: () => T | undefined | Promise<T | undefined> } = {},
    ): Promise<T | number> {
      const stallMs = (opts.stallMs ?? 10_000) * chaosTimeScale();
      const startedAt = Date.now();
      let topBytes = 0;
      let grewAt = startedAt;
      for (;;) {
        const d = opts.done ? await opts.done() : undefined;
        if (d) return d;
        const now = Date.now();
        const usage = memoryUsageBytes(layout.version, memDir);
        if (usage >= lineBytes && workingSetBytes(layout.version, memDir) >= lineBytes) {
          say(`${what}: ${(lineBytes / MIB).toFixed(0)} MiB reached after ${((now - startedAt) / 1000).toFixed(1)} s`);
          return now;
        }
        if (usage >= topBytes + MIB) {
          topBytes = usage;
          grewAt = now;
        } else if (now - grewAt > stallMs) {
          throw new Error(
            `${what}: the ramp stalled — ${memDir} usage ${(usage / MIB).toFixed(0)} MiB (top ${(topBytes / MIB).toFixed(0)} MiB, line ${(lineBytes / MIB).toFixed(0)} MiB) has not grown by 1 MiB for ${stallMs} ms (${((now - startedAt) / 1000).toFixed(1)} s since the wait began)`,
          );
        }
        await Bun.sleep(opts.intervalMs ?? 50);
      }
    },

    trace(): TraceRecord[] {
      if (!existsSync(tracePath)) return [];
      return readFileSync(tracePath, "utf8")
        .split("\n")
        .filter((l) => l.trim())
        .map((l) => JSON.parse(l) as TraceRecord);
    },
    traceText(): string {
      return existsSync(tracePath) ? readFileSync(tracePath, "utf8") : "";
    },

    /** Something the reader of the result must know, a figure or how the scenario ran (printed with the checks). */
    note(msg: string): void {
      notes.push(msg);
      say(`note: ${msg}`);
    },

    check(checkName: string, ok: boolean, detail?: string): boolean {
      checks.push({ name: checkName, ok, detail });
      say(`${ok ? "ok  " : "FAIL"} ${checkName}${detail ? ` — ${detail}` : ""}`);
      return ok;
    },

    /** The directory of cgroup <parts> ("kubepods", "burstable") in one controller (v1) or the unified hierarchy (v2), as bunlet's driver names it. */
    cgroupDir(controller: string, ...parts: string[]): string {
      return cgroupDir(layout, controller, parts);
    },
    /** A pod's cgroup dir by QoS class. */
    podCgroupDir(controller: string, uid: string, qos: "Guaranteed" | "Burstable" | "BestEffort"): string {
      return podDir(layout, controller, uid, qos);
    },
    /** Working set (usage − inactive file) of a memory cgroup, bytes. */
    workingSet(memDir: string): number {
      return workingSetBytes(layout.version, memDir);
    },
    /** A memory cgroup's limit-hit, OOM and peak counters (v1 failcnt/oom_control, v2 memory.events/peak). */
    memoryCounters(memDir: string): MemoryLimitCounters {
      return memoryLimitCounters(layout.version, memDir);
    },

    defer(fn: () => Promise<void> | void): void {
      cleanups.push(fn);
    },

    /** Cleanup, idempotent: bunlet, the node's pods, cgroups, runtime, mounts, temp dir. */
    cleanup: once(async (): Promise<string[]> => {
      const problems: string[] = [];
      const step = async (what: string, fn: () => unknown) => {
        try {
          await fn();
        } catch (e) {
          problems.push(`${what}: ${(e as Error).message}`);
        }
      };
      await step("stop bunlet", () => h.stopBunlet("SIGTERM"));
      if (runtime) {
        const cri = runtime.cri;
        await step("remove pods", async () => {
          for (const s of await cri.listPodSandbox()) {
            if (!s.metadata?.name?.endsWith(`-${nodeName}`)) continue;
            await removeSandbox(cri, s.id);
          }
        });
      }
      await step("cgroups", () => {
        if (systemd) {
          if (madeKubepodsSlice) stopKubepodsSlice(kubepodsDir(layout));
          return;
        }
        const p = removeCgroupTree(cgroupRoot);
        if (p.length) throw new Error(p.join("; "));
      });
      for (const fn of cleanups.reverse()) await step("cleanup", fn);
      if (shared) await step("release containerd", () => shared!.release());
      for (const m of mounts.reverse()) {
        await step(`umount ${m}`, () => {
          for (let i = 0; i < 50; i++) {
            const r = spawnSync("umount", [m], { encoding: "utf8" });
            if (r.status === 0) return;
            Bun.sleepSync(100);
          }
          const r = spawnSync("umount", ["-l", m], { encoding: "utf8" });
          if (r.status !== 0) throw new Error(r.stderr);
        });
      }
      await step("temp dir", () => removeTree(dir));
      return problems;
    }),

    result: () => ({ checks, logs, notes }),
  };
  return h;
}

/** systemd driver: stops kubepods.slice and every slice and scope below it (the pods bunlet left). */
function stopKubepodsSlice(dir: string): void {
  const r = spawnSync("systemctl", ["stop", "kubepods.slice"], { encoding: "utf8", timeout: 30_000 });
  if (r.status !== 0) throw new Error(`systemctl stop kubepods.slice: ${r.stderr || r.error?.message}`);
  for (let i = 0; i < 100 && existsSync(dir); i++) Bun.sleepSync(20);
  if (existsSync(dir)) throw new Error(`${dir} still exists after systemctl stop kubepods.slice`);
}

function once<T>(fn: () => Promise<T>): () => Promise<T> {
  let p: Promise<T> | undefined;
  return () => (p ??= fn());
}
