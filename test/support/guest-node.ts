// dist/bunlet running static pods on a private containerd, as the real-kernel files in
// test/integration/v2 set it up inside the v2 guest (in-guest.test.ts runs them there): whether the
// file can run here (guestGate), then useGuestNode() in a describe — beforeAll builds the binary,
// acquires the test containerd (images imported) and makes the manifest directory; start() spawns
// bunlet with the test's flags and waits for /healthz; afterAll stops it and removes the node's
// sandboxes, its cgroups (the cgroupfs driver: the whole cgroupRoot; the systemd driver: the kubepods
// slices) and files, and releases containerd, even when a test failed half-way.
//   const n = useGuestNode({ name: "v2-pods", node: "v2" });
//   await n.start([...n.flags(), "--system-reserved=memory=100Mi"]);
//   const uid = await n.waitRunning("g");
import { afterAll, beforeAll } from "bun:test";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { isUnifiedMount } from "../../src/pod/cm/cgroup-v2-manager.ts";
import type { Pod } from "../../src/pod/types.ts";
import { staticPodFlags, writeStaticPodConfig } from "./agent.ts";
import { ensureBuilt, freePort, killAll, pollUntil, spawnBunlet, waitForHealthz, type BunletProcess } from "./binary.ts";
import { acquireContainerd, removeSandboxes, tearDownPods, type TestContainerd } from "./containerd.ts";
import { KUBEPODS_SLICES, stopKubepodsSlices } from "./cgroup.ts";
import { removeTree } from "./remove-tree.ts";

export { KUBEPODS_SLICES, stopKubepodsSlices };

export const MOUNT = "/sys/fs/cgroup";
export const MiB = 2 ** 20;

/** /proc/1/comm ("" when unreadable). */
export function pid1Comm(): string {
  try {
    return readFileSync("/proc/1/comm", "utf8").trim();
  } catch {
    return "";
  }
}

/**
 * Where a real-kernel file can run: "cgroup2" as root on a cgroup2 mount; "systemd" also with systemd as
 * PID 1; "systemd-v1" only in the guest booted with --systemd --cgroup-v1 (it uses the real kubepods.slice).
 * Warns "skipping <what>: <why>" when it cannot.
 */
export function guestGate(need: "cgroup2" | "systemd" | "systemd-v1", what: string): boolean {
  const root = process.getuid?.() === 0;
  const ok =
    need === "cgroup2"
      ? root && isUnifiedMount(MOUNT)
      : need === "systemd"
        ? root && pid1Comm() === "systemd" && isUnifiedMount(MOUNT)
        : !!process.env.BUNLET_IN_V2_GUEST && pid1Comm() === "systemd" && !isUnifiedMount(MOUNT) && existsSync(join(MOUNT, "memory", "cgroup.procs"));
  const why = {
    cgroup2: "/sys/fs/cgroup is not a cgroup2 mount (they run in the guest: in-guest.test.ts)",
    systemd: "needs systemd as PID 1 on cgroup v2 (the guest with --systemd: in-guest.test.ts)",
    "systemd-v1": "runs in the guest booted with --systemd --cgroup-v1 (in-guest.test.ts)",
  }[need];
  if (!ok) console.warn(`skipping ${what}: ${why}`);
  return ok;
}

/** MemTotal of /proc/meminfo in bytes. */
export function memTotalBytes(): number {
  return Number(/^MemTotal:\s+(\d+) kB/m.exec(readFileSync("/proc/meminfo", "utf8"))![1]) * 1024;
}

/** A cgroup file's trimmed content, `parts` relative to the mount. */
export function cgroupFile(...parts: string[]): string {
  return readFileSync(join(MOUNT, ...parts), "utf8").trim();
}

/** `systemctl show --value -p <prop> <unit>`; throws with systemctl's stderr on a non-zero exit. */
export function systemctlShow(unit: string, prop: string): string {
  const r = Bun.spawnSync(["systemctl", "show", "--value", "-p", prop, unit], { stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`systemctl show ${unit} -p ${prop}: ${r.stderr.toString()}`);
  return r.stdout.toString().trim();
}

export interface GuestNodeOpts {
  /** Names the node's files (/tmp/bunlet-<name>-<pid>) and, with cgroupfs, its cgroup root (/bunlet-<name>-<pid>). */
  name: string;
  /** The node name's prefix (`<node>-<pid>`); the pods are named `<pod>-<node>-<pid>`. */
  node: string;
  /** cgroupDriver systemd: containerd's runc with SystemdCgroup = true, cgroupRoot "/", the kubepods slices stopped afterwards. */
  systemd?: boolean;
}

export interface GuestNode {
  readonly base: string;
  readonly manifests: string;
  readonly node: string;
  /** /bunlet-<name>-<pid>, or "/" with the systemd driver. */
  readonly cgroupRoot: string;
  /** The test containerd (set in beforeAll). */
  readonly ctd: TestContainerd;
  /** The main server's port of the bunlet start() runs (chosen in beforeAll). */
  readonly port: number;
  /** The bunlet start() spawned. */
  readonly proc: BunletProcess | undefined;
  /** Static-pod flags for this node (root dir <base>/<rootDir>, default "root"; `port` default this node's). */
  flags(o?: { rootDir?: string; port?: number }): string[];
  /** Writes <base>/config.yaml (static pods plus `extra` lines) and returns the flags to run with it. */
  configFlags(extra: string[]): string[];
  /** Spawns dist/bunlet with `args` and waits for its /healthz (the port must be this node's). */
  start(args: string[]): Promise<BunletProcess>;
  /** GET of the node's `path`, as JSON. */
  get<T>(path: string): Promise<T>;
  /** The static pod `name` (its mirror name `<name>-<node>`) as /pods lists it. */
  pod(name: string): Promise<Pod | undefined>;
  /** Waits until the pod is Running; returns its uid. */
  waitRunning(name: string): Promise<string>;
  /** Waits until /stats/summary reports a working set for the pod. */
  waitPodMemory(name: string): Promise<void>;
}

/** Registers the beforeAll/afterAll of one bunlet node in the calling describe; see the file header. */
export function useGuestNode(o: GuestNodeOpts): GuestNode {
  const base = `/tmp/bunlet-${o.name}-${process.pid}`;
  const manifests = join(base, "manifests");
  const node = `${o.node}-${process.pid}`;
  const cgroupRoot = o.systemd ? "/" : `/bunlet-${o.name}-${process.pid}`;
  let ctd: TestContainerd | undefined;
  let port = 0;
  let proc: BunletProcess | undefined;
  const url = (path: string) => `http://127.0.0.1:${port}${path}`;

  beforeAll(async () => {
    await ensureBuilt();
    ctd = await acquireContainerd({ systemdCgroup: !!o.systemd });
    mkdirSync(manifests, { recursive: true });
    port = freePort();
  }, 600_000);

  afterAll(async () => {
    try {
      await proc?.stop("SIGTERM", o.systemd ? 10_000 : 5000);
      await killAll();
    } finally {
      const removePods = async () => void (ctd && (await removeSandboxes(ctd.cri, node)));
      if (!o.systemd) await tearDownPods(ctd, removePods, cgroupRoot, base);
      else
        try {
          await removePods();
        } finally {
          stopKubepodsSlices();
          removeTree(base);
          await ctd?.release();
        }
    }
  }, 120_000);

  const n: GuestNode = {
    base,
    manifests,
    node,
    cgroupRoot,
    get ctd() {
      if (!ctd) throw new Error("useGuestNode: containerd is acquired in beforeAll");
      return ctd;
    },
    get port() {
      return port;
    },
    get proc() {
      return proc;
    },
    flags: (f = {}) =>
      staticPodFlags({ rootDir: join(base, f.rootDir ?? "root"), manifests, cgroupRoot, endpoint: n.ctd.endpoint, node, port: f.port ?? port }),
    configFlags(extra) {
      const config = writeStaticPodConfig(
        join(base, "config.yaml"),
        { manifests, cgroupRoot, endpoint: n.ctd.endpoint, port, podLogsDir: join(base, "logs") },
        extra,
      );
      return [`--config=${config}`, `--root-dir=${join(base, "root")}`, `--hostname-override=${node}`];
    },
    async start(args) {
      proc = spawnBunlet(args);
      await waitForHealthz(proc, url("/healthz"), 60_000);
      return proc;
    },
    async get<T>(path: string) {
      return (await (await fetch(url(path))).json()) as T;
    },
    async pod(name) {
      return (await n.get<{ items: Pod[] }>("/pods")).items.find((x) => x.metadata.name === `${name}-${node}`);
    },
    async waitRunning(name) {
      await pollUntil(async () => (await n.pod(name))?.status?.phase === "Running", `pod ${name} Running`, 120_000, 200);
      return (await n.pod(name))!.metadata.uid;
    },
    async waitPodMemory(name) {
      await pollUntil(
        async () => {
          const s = await n.get<{ pods: { podRef: { name: string }; memory?: { workingSetBytes?: number } }[] }>("/stats/summary");
          return (s.pods.find((x) => x.podRef.name === `${name}-${node}`)?.memory?.workingSetBytes ?? 0) > 0;
        },
        `pod ${name} memory in /stats/summary`,
        30_000,
        200,
      );
    },
  };
  return n;
}
