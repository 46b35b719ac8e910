// Chaos scenario harness: runs the compiled dist/bunlet on a private containerd with static pods in a
// throw-away node (temp root dir, manifests dir, trace file, cgroupRoot /bunlet-chaos-<pid>-<n> with a
// memory limit), lets a scenario drive and watch it (/pods, /debug/eviction, --eviction-trace, logs,
// cgroup files), records named checks, and ALWAYS tears everything down: bunlet, the node's pods
// (through the CRI), cgroups, mounts, temp dirs — on success, failure, timeout and Ctrl-C.
//
//   const result = await runScenario(besteffortHog);     // from a test
//   await cli(besteffortHog);                            // from scripts/chaos/<name>.ts
//
// Memory is fenced twice so the 24 GB host is never exhausted: node allocatable (systemReserved =
// MemTotal − allocatable) makes bunlet write that limit on <cgroupRoot>/kubepods, and the harness
// itself caps <cgroupRoot> a little above it before bunlet starts.
import { spawnSync } from "node:child_process";
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmdirSync, rmSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createCriClient, type CriClient } from "../../src/cri/client.ts";
import { ensureBuilt, freePort, spawnBunlet, type BunletProcess } from "../../test/support/binary.ts";
import { acquireContainerd, canRunContainerd, type TestContainerd } from "../../test/support/containerd.ts";

export const MIB = 1024 * 1024;
const CGROUP_MOUNT = "/sys/fs/cgroup";
const HOST_SCRIPTS = resolve(import.meta.dir, "../host");

/** What a scenario needs from the runtime: the private containerd and the image names. */
export interface ChaosRuntime {
  endpoint: string;
  cri: CriClient;
  /** containerd's root (imagefs). */
  root: string;
  images: { busybox: string; pause: string; memhog: string };
}

export interface Check {
  name: string;
  ok: boolean;
  detail?: string;
}

/** One line of --eviction-trace (see src/wire/trace.ts EvictionTraceRecord); loosely typed on purpose. */
export interface TraceRecord {
  kind: string;
  pod: string;
  uid: string;
  signal: string;
  observed: string | null;
  threshold: string | null;
  gracePeriodSeconds: number;
  message: string;
  trigger: { kind: string; reason?: string };
  timestamps: Record<string, string | null>;
  latencyMs: Record<string, number | null>;
  ranked: { pod: string; priority: number; usage: number }[];
  nodeConditions: string[];
  [k: string]: unknown;
}

/** The v1 Pod fields scenarios read from /pods. */
export interface PodView {
  metadata: { name: string; namespace?: string; uid?: string; annotations?: Record<string, string> };
  spec: Record<string, unknown>;
  status?: {
    phase?: string;
    reason?: string;
    message?: string;
    conditions?: { type: string; status: string; reason?: string }[];
    containerStatuses?: {
      name: string;
      containerID?: string;
      restartCount?: number;
      state?: { running?: object; waiting?: { reason?: string }; terminated?: { reason?: string; exitCode?: number } };
      lastState?: { terminated?: { reason?: string } };
    }[];
  };
}

export interface PodSpecInput {
  image?: string;
  command?: string[];
  args?: string[];
  requests?: Record<string, string>;
  limits?: Record<string, string>;
  priority?: number;
  restartPolicy?: "Always" | "OnFailure" | "Never";
  terminationGracePeriodSeconds?: number;
  /** emptyDir volume mounted at this path (disk scenarios). */
  emptyDir?: string;
}

/** A static pod manifest (hostNetwork: no CNI work, fast sandbox start). */
export function podManifest(name: string, p: PodSpecInput, images: ChaosRuntime["images"]): object {
  const resources: Record<string, object> = {};
  if (p.requests) resources.requests = p.requests;
  if (p.limits) resources.limits = p.limits;
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, labels: { app: name, "bunlet.chaos": "1" } },
    spec: {
      hostNetwork: true,
      restartPolicy: p.restartPolicy ?? "Always",
      terminationGracePeriodSeconds: p.terminationGracePeriodSeconds ?? 1,
      ...(p.priority !== undefined ? { priority: p.priority } : {}),
      ...(p.emptyDir ? { volumes: [{ name: "scratch", emptyDir: {} }] } : {}),
      containers: [
        {
          name: "main",
          image: p.image ?? images.busybox,
          ...(p.command ? { command: p.command } : {}),
          ...(p.args ? { args: p.args } : {}),
          ...(Object.keys(resources).length ? { resources } : {}),
          ...(p.emptyDir ? { volumeMounts: [{ name: "scratch", mountPath: p.emptyDir }] } : {}),
        },
      ],
    },
  };
}

/** Reads a cgroup v1 file, undefined when the cgroup or file is gone. */
export function readCgroupFile(dir: string, file: string): string | undefined {
  try {
    return readFileSync(join(dir, file), "utf8");
  } catch {
    return undefined;
  }
}

/** Parses "key value" lines (memory.stat, memory.oom_control). */
export function flatKeyed(text: string | undefined): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of (text ?? "").split("\n")) {
    const [k, v] = line.trim().split(/\s+/);
    if (k && v !== undefined && Number.isFinite(Number(v))) out[k] = Number(v);
  }
  return out;
}

/** Total OOM kills the kernel reports (/proc/vmstat oom_kill, kernel ≥ 4.13). */
export function hostOomKills(): number {
  return flatKeyed(readFileSync("/proc/vmstat", "utf8")).oom_kill ?? 0;
}

export function memTotalBytes(): number {
  const m = /^MemTotal:\s+(\d+) kB$/m.exec(readFileSync("/proc/meminfo", "utf8"));
  if (!m) throw new Error("/proc/meminfo has no MemTotal line");
  return Number(m[1]) * 1024;
}

/** Tasks on the node as bunlet's pid.available counts them (/proc/loadavg field 4). */
export function hostTaskCount(): number {
  const m = /\s\d+\/(\d+)\s/.exec(readFileSync("/proc/loadavg", "utf8"));
  return m ? Number(m[1]) : 0;
}

export function hostMaxPid(): number {
  const n = (p: string) => Number(readFileSync(p, "utf8").trim());
  return Math.min(n("/proc/sys/kernel/pid_max"), n("/proc/sys/kernel/threads-max"));
}

/** Every v1 controller hierarchy directory (cpu,cpuacct counted once). */
function controllerDirs(): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const c of readdirSync(CGROUP_MOUNT)) {
    const p = join(CGROUP_MOUNT, c);
    try {
      if (!statSync(p).isDirectory() || !existsSync(join(p, "cgroup.procs"))) continue;
      const key = `${statSync(p).dev}:${statSync(p).ino}`;
      if (seen.has(key)) continue;
      seen.add(key);
      out.push(p);
    } catch {}
  }
  return out;
}

/** Kills what is left in a cgroup subtree (only our own pods' processes live there) and removes it bottom-up. */
export function removeCgroupTree(relPath: string): string[] {
  const problems: string[] = [];
  for (const ctl of controllerDirs()) {
    const top = join(ctl, relPath);
    if (!existsSync(top)) continue;
    const dirs: string[] = [];
    const walk = (d: string) => {
      dirs.push(d);
      for (const e of readdirSync(d, { withFileTypes: true })) if (e.isDirectory()) walk(join(d, e.name));
    };
    try {
      walk(top);
    } catch {}
    for (const d of dirs.reverse()) {
      let ok = false;
      for (let i = 0; i < 100 && !ok; i++) {
        for (const pid of (readCgroupFile(d, "cgroup.procs") ?? "").split("\n").filter(Boolean)) {
          try {
            process.kill(Number(pid), "SIGKILL");
          } catch {}
        }
        try {
          rmdirSync(d);
          ok = true;
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code === "ENOENT") ok = true;
          else Bun.sleepSync(20);
        }
      }
      if (!ok) problems.push(`could not remove cgroup ${d}`);
    }
  }
  return problems;
}

export interface RunOptions {
  /** Whole-scenario bound (setup + run + verify; cleanup comes after). Default 60 s. */
  timeoutMs?: number;
  /** Print progress lines as they happen (CLI). */
  verbose?: boolean;
}

export interface ScenarioResult {
  name: string;
  pass: boolean;
  checks: Check[];
  trace: TraceRecord[];
  durationMs: number;
  error?: string;
  /** bunlet's stderr (all runs), for a failing scenario's report. */
  logs: string;
  cleanupProblems: string[];
}

export interface Scenario {
  name: string;
  description: string;
  run(h: Harness): Promise<void>;
}

export interface StartOptions {
  /** KubeletConfiguration fields (merged over the harness's base). */
  config?: Record<string, unknown>;
  /** Node allocatable memory: kubepods gets this limit (systemReserved = MemTotal − this). */
  allocatableBytes: number;
  extraArgs?: string[];
  /** --root-dir (nodefs); default <scenario dir>/root. */
  rootDir?: string;
  /** Wait until these manifests' pods are Running (default: every manifest written so far). */
  waitRunning?: string[];
}

let seq = 0;

export type Harness = ReturnType<typeof createHarness>;

function createHarness(name: string, verbose: boolean) {
  const n = ++seq;
  const tag = `${process.pid}-${n}`;
  const dir = mkdtempSync(join(tmpdir(), `bunlet-chaos-${name}-${tag}-`));
  const nodeName = `chaos-${tag}`;
  const cgroupRoot = `/bunlet-chaos-${tag}`;
  const manifestsDir = join(dir, "manifests");
  const rootDir = join(dir, "root");
  const tracePath = join(dir, "eviction-trace.jsonl");
  const configPath = join(dir, "kubelet.yaml");
  mkdirSync(manifestsDir);
  mkdirSync(rootDir);
  const checks: Check[] = [];
  const logs: string[] = [];
  const mounts: string[] = [];
  const cleanups: (() => Promise<void> | void)[] = [];
  let runtime: ChaosRuntime | undefined;
  let shared: TestContainerd | undefined;
  let bunlet: BunletProcess | undefined;
  let port = 0;
  let lastStart: StartOptions | undefined;
  const t0 = performance.now();

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

    /** A containerd of its own with its root under `root` (e.g. on a small tmpfs), destroyed at cleanup. */
    async usePrivateContainerd(root: string): Promise<ChaosRuntime> {
      const env = {
        ...process.env,
        BUNLET_CONTAINERD_DIR: `/run/bunlet/chaos-${tag}`,
        BUNLET_CONTAINERD_ROOT: root,
        BUNLET_CNI_BRIDGE: `bch${tag}`.replace(/-/g, "").slice(0, 15),
        BUNLET_CNI_SUBNET: `10.88.${(process.pid + n) % 200 + 20}.0/24`,
      };
      const sh = (cmd: string) => spawnSync("bash", [join(HOST_SCRIPTS, "containerd.sh"), cmd], { env, encoding: "utf8", timeout: 120_000 });
      cleanups.push(() => {
        runtime?.cri.close();
        const r = sh("destroy");
        if (r.status !== 0) throw new Error(`containerd.sh destroy: ${r.stderr}`);
      });
      const setup = spawnSync("bash", [join(HOST_SCRIPTS, "setup.sh")], { encoding: "utf8", timeout: 600_000 });
      if (setup.status !== 0) throw new Error(`scripts/host/setup.sh failed: ${setup.stderr}`);
      const r = sh("start");
      if (r.status !== 0) throw new Error(`containerd.sh start failed: ${r.stderr}${r.stdout}`);
      const endpoint = `unix://${env.BUNLET_CONTAINERD_DIR}/containerd.sock`;
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
      // The harness fence: the cgroupRoot limit, a little above allocatable (room for pod overhead
      // that upstream also leaves outside kubepods). Written before bunlet creates kubepods below it.
      const memRoot = join(CGROUP_MOUNT, "memory", cgroupRoot);
      mkdirSync(memRoot, { recursive: true });
      writeFileSync(join(memRoot, "memory.limit_in_bytes"), String(opts.allocatableBytes + 128 * MIB));
      const base: Record<string, unknown> = {
        apiVersion: "kubelet.config.k8s.io/v1beta1",
        kind: "KubeletConfiguration",
        staticPodPath: manifestsDir,
        fileCheckFrequency: "1s",
        containerRuntimeEndpoint: h.runtime.endpoint,
        cgroupDriver: "cgroupfs",
        cgroupRoot,
        address: "127.0.0.1",
        healthzBindAddress: "127.0.0.1",
        healthzPort: 0,
        readOnlyPort: 0,
        enforceNodeAllocatable: ["pods"],
        systemReserved: { memory: String(total - opts.allocatableBytes) },
        evictStaticPods: true,
        // The fast path: memcg threshold notifications (upstream default false).
        kernelMemcgNotification: true,
        evictionPressureTransitionPeriod: "2s",
      };
      const config = { ...base, ...opts.config };
      port ||= freePort();
      config.port = port;
      writeFileSync(configPath, JSON.stringify(config, null, 2));
      await ensureBuilt();
      const args = ["--config", configPath, `--root-dir=${opts.rootDir ?? rootDir}`, `--hostname-override=${nodeName}`, `--eviction-trace=${tracePath}`, "--v=2", ...(opts.extraArgs ?? [])];
      say(`starting dist/bunlet ${args.join(" ")}`);
      const p = spawnBunlet(args, { cwd: dir });
      bunlet = p;
      void p.exited.then((code) => {
        logs.push(`--- bunlet pid ${p.pid} exited ${code}; stderr ---\n${p.stderr()}`);
        if (bunlet === p) bunlet = undefined;
      });
      await h.waitFor("bunlet to answer /healthz", async () => {
        if (!bunlet) throw new Error(`bunlet exited before it was healthy:\n${p.stderr().slice(-4000)}`);
        try {
          return (await fetch(`http://127.0.0.1:${port}/healthz`)).status === 200;
        } catch {
          return false;
        }
      }, 15_000);
      const want = opts.waitRunning ?? h.manifestNames();
      if (want.length) await h.waitRunning(want);
    },

    /**
     * Waits until bunlet has armed its memcg notifier on kubepods (the log line at --v=2). It is armed
     * from the eviction manager's stats, refreshed every 10 s; the first refresh can run before the
     * kubepods cgroup exists, so a ramp started right away may only be seen by the periodic loop.
     */
    async waitNotifierArmed(kind: "hard" | "soft" = "hard", timeoutMs = 15_000): Promise<void> {
      const re = new RegExp(`memcg notifier armed description="${kind} allocatable memory eviction threshold"`);
      await h.waitFor(`the ${kind} allocatable memcg notifier to be armed`, () => re.test(bunlet?.stderr() ?? ""), timeoutMs, 100);
      say(`bunlet armed the ${kind} memcg threshold notifier on kubepods`);
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
      const res = await fetch(`http://127.0.0.1:${port}/pods`);
      if (res.status !== 200) throw new Error(`/pods answered ${res.status}`);
      const body = (await res.json()) as { items?: PodView[] };
      return body.items ?? [];
    },
    async pod(manifest: string): Promise<PodView | undefined> {
      return (await h.pods()).find((p) => p.metadata.name === h.podName(manifest));
    },
    async debugEviction(): Promise<Record<string, unknown>> {
      const res = await fetch(`http://127.0.0.1:${port}/debug/eviction`);
      if (res.status !== 200) throw new Error(`/debug/eviction answered ${res.status}: ${await res.text()}`);
      return (await res.json()) as Record<string, unknown>;
    },
    async metrics(): Promise<string> {
      return await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    },

    async waitRunning(manifests: string[], timeoutMs = 30_000): Promise<Map<string, PodView>> {
      let last: PodView[] = [];
      try {
        await h.waitFor(`pods ${manifests.join(",")} Running`, async () => {
          last = await h.pods().catch(() => []);
          return manifests.every((m) => isRunning(last.find((p) => p.metadata.name === h.podName(m))));
        }, timeoutMs);
      } catch (e) {
        const phases = last.map((p) => `${p.metadata.name}=${p.status?.phase}`).join(" ");
        throw new Error(`${(e as Error).message} (pods: ${phases || "none"})`);
      }
      say(`pods Running: ${manifests.join(", ")}`);
      return new Map(manifests.map((m) => [m, last.find((p) => p.metadata.name === h.podName(m))!]));
    },

    /** Polls until `cond` returns a truthy value (returned); throws after `timeoutMs`. */
    async waitFor<T>(what: string, cond: () => T | Promise<T>, timeoutMs = 20_000, intervalMs = 50): Promise<NonNullable<T>> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const v = await cond();
        if (v) return v as NonNullable<T>;
        if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
        await Bun.sleep(intervalMs);
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

    check(checkName: string, ok: boolean, detail?: string): boolean {
      checks.push({ name: checkName, ok, detail });
      say(`${ok ? "ok  " : "FAIL"} ${checkName}${detail ? ` — ${detail}` : ""}`);
      return ok;
    },

    /** <cgroupRoot>/<parts> in one v1 controller. */
    cgroupDir(controller: string, ...parts: string[]): string {
      return join(CGROUP_MOUNT, controller, cgroupRoot, ...parts);
    },
    /** A pod's cgroup dir (cgroupfs layout) by QoS class. */
    podCgroupDir(controller: string, uid: string, qos: "Guaranteed" | "Burstable" | "BestEffort"): string {
      return qos === "Guaranteed" ? h.cgroupDir(controller, "kubepods", `pod${uid}`) : h.cgroupDir(controller, "kubepods", qos.toLowerCase(), `pod${uid}`);
    },
    /** Working set (usage − total_inactive_file) of a memory cgroup, bytes. */
    workingSet(memDir: string): number {
      const usage = Number(readCgroupFile(memDir, "memory.usage_in_bytes") ?? 0);
      return Math.max(0, usage - (flatKeyed(readCgroupFile(memDir, "memory.stat")).total_inactive_file ?? 0));
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
            await cri.stopPodSandbox(s.id).catch(() => {});
            await cri.removePodSandbox(s.id);
          }
        });
      }
      await step("cgroups", () => {
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
      await step("temp dir", () => rmSync(dir, { recursive: true, force: true }));
      return problems;
    }),

    result: () => ({ checks, logs }),
  };
  return h;
}

function once<T>(fn: () => Promise<T>): () => Promise<T> {
  let p: Promise<T> | undefined;
  return () => (p ??= fn());
}

/** Trace timestamps carry microseconds ("…:05.123456Z"); Date.parse wants milliseconds. */
export function traceTimeMs(iso: string | null | undefined): number {
  if (!iso) return Number.NaN;
  const m = /^(.*\.\d{3})(\d*)Z$/.exec(iso);
  return m ? Date.parse(`${m[1]}Z`) + Number(`0.${m[2] || "0"}`) : Date.parse(iso);
}

export function isRunning(p: PodView | undefined): boolean {
  return p?.status?.phase === "Running" && (p.status.containerStatuses ?? []).every((c) => c.state?.running !== undefined);
}

/** True when the pod was evicted (Failed/Evicted) — what /pods shows after the kill. */
export function isEvicted(p: PodView | undefined): boolean {
  return p?.status?.phase === "Failed" && p.status.reason === "Evicted";
}

/** Container IDs and restart counts: "kept running" means these do not change. */
export function containerFingerprint(p: PodView | undefined): string {
  return (p?.status?.containerStatuses ?? []).map((c) => `${c.name}:${c.containerID}:${c.restartCount ?? 0}`).join(",");
}

let active: Harness | undefined;

/** Cleans up the scenario still running, if any (a test's afterAll after a timeout; Ctrl-C). */
export async function cleanupActive(): Promise<string[]> {
  const h = active;
  active = undefined;
  return h ? await h.cleanup() : [];
}

/** Runs one scenario with a bounded duration and guaranteed cleanup. */
export async function runScenario(s: Scenario, opts: RunOptions = {}): Promise<ScenarioResult> {
  const timeoutMs = opts.timeoutMs ?? 60_000;
  const started = performance.now();
  if (!canRunContainerd()) {
    return { name: s.name, pass: false, checks: [], trace: [], durationMs: 0, error: "chaos scenarios need root on Linux (cgroups, mounts, containerd)", logs: "", cleanupProblems: [] };
  }
  const h = createHarness(s.name, opts.verbose ?? false);
  active = h;
  let error: string | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const timeout = new Promise<never>((_, rej) => (timer = setTimeout(() => rej(new Error(`scenario exceeded ${timeoutMs} ms`)), timeoutMs)));
    await Promise.race([s.run(h), timeout]);
  } catch (e) {
    error = (e as Error).message;
    h.say(`ERROR ${error}`);
  } finally {
    clearTimeout(timer);
  }
  const durationMs = performance.now() - started;
  const trace = safe(() => h.trace(), []);
  const bunletLogs = h.bunletLogs();
  const cleanupProblems = await h.cleanup();
  active = undefined;
  const { checks } = h.result();
  const pass = !error && checks.length > 0 && checks.every((c) => c.ok) && cleanupProblems.length === 0;
  return { name: s.name, pass, checks, trace, durationMs, error, logs: bunletLogs, cleanupProblems };
}

function safe<T>(fn: () => T, fallback: T): T {
  try {
    return fn();
  } catch {
    return fallback;
  }
}

/** One line per trace record: who, why, and the latencies from the crossing. */
export function formatTraceRecord(r: TraceRecord): string {
  const l = r.latencyMs;
  const ms = (v: number | null | undefined) => (v === null || v === undefined ? "-" : `${v.toFixed(1)}ms`);
  return (
    `${r.pod} signal=${r.signal} observed=${r.observed} threshold=${r.threshold} trigger=${r.trigger.kind}` +
    ` decision=${ms(l.decision)} signalSent=${ms(l.stopSignalSent)} exited=${ms(l.containerExited)} belowThreshold=${ms(l.belowThreshold)}` +
    ` rank=[${r.ranked.map((x) => x.pod).join(",")}] conditions=[${r.nodeConditions.join(",")}]`
  );
}

export function printResult(r: ScenarioResult): void {
  console.log(`\n=== ${r.name}: ${r.pass ? "PASS" : "FAIL"} (${(r.durationMs / 1000).toFixed(1)} s) ===`);
  for (const c of r.checks) console.log(`  ${c.ok ? "✓" : "✗"} ${c.name}${c.detail ? ` — ${c.detail}` : ""}`);
  if (r.error) console.log(`  error: ${r.error}`);
  for (const p of r.cleanupProblems) console.log(`  cleanup problem: ${p}`);
  console.log(`--- eviction trace (${r.trace.length} record${r.trace.length === 1 ? "" : "s"}) ---`);
  for (const t of r.trace) console.log(`  ${formatTraceRecord(t)}`);
  for (const t of r.trace) console.log(JSON.stringify(t));
  if (process.env.BUNLET_CHAOS_SHOW_LOG) console.log(`--- bunlet log ---\n${r.logs}`);
  else if (!r.pass) {
    const tail = r.logs.split("\n").slice(-80).join("\n");
    console.log(`--- bunlet log (last 80 lines) ---\n${tail}`);
  }
}

/** `bun scripts/chaos/<name>.ts`: run, print PASS/FAIL and the trace, exit 0/1; Ctrl-C still cleans up. */
export async function cli(s: Scenario): Promise<void> {
  console.log(`scenario ${s.name}: ${s.description}`);
  let interrupted = false;
  const onSignal = (sig: string) => {
    if (interrupted) process.exit(130);
    interrupted = true;
    console.log(`\n${sig}: cleaning up…`);
    void cleanupActive().then((problems) => {
      for (const p of problems) console.log(`cleanup problem: ${p}`);
      process.exit(130);
    });
  };
  process.on("SIGINT", () => onSignal("SIGINT"));
  process.on("SIGTERM", () => onSignal("SIGTERM"));
  const r = await runScenario(s, { verbose: true });
  printResult(r);
  if (process.env.BUNLET_CHAOS_REPORT) appendFileSync(process.env.BUNLET_CHAOS_REPORT, `${JSON.stringify({ name: r.name, pass: r.pass, durationMs: Math.round(r.durationMs) })}\n`);
  process.exit(r.pass ? 0 : 1);
}
