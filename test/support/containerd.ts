// A private containerd for integration tests: started once per test process (refcounted across test
// files), on a socket/root/bridge unique to this process, torn down — every sandbox, container, shim,
// mount and directory — when the last user releases it.
//   const ctd = await acquireContainerd(); ... afterAll(() => ctd.release());
// `acquireContainerd({ systemdCgroup: true })` (or env BUNLET_CONTAINERD_SYSTEMD_CGROUP=1, e.g. for the
// chaos suite) configures runc with SystemdCgroup = true, for bunlet's cgroupDriver systemd.
// BUNLET_TEST_RUNTIME=crio runs a private CRI-O (scripts/host/crio.sh) in containerd's place, behind the
// same interface (docs/upstream.md says which suites run on it).
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { resolve } from "node:path";
import { type CriClient, createCriClient } from "../../src/cri/client.ts";
import type { Runtime } from "../../src/pod/runtime.ts";
import { removeCgroupTree } from "./cgroup.ts";
import { removeTree } from "./remove-tree.ts";

const SCRIPTS = resolve(import.meta.dir, "../../scripts/host");

export interface TestContainerd {
  endpoint: string;
  socket: string;
  /** containerd root (content, snapshots) and run dir (socket, state, log). */
  root: string;
  dir: string;
  /** A client on the private socket (closed on the last release). */
  cri: CriClient;
  /** Images built offline by scripts/host/setup.sh and imported into this containerd. */
  images: { busybox: string; pause: string; memhog: string };
  /** runc's cgroup driver in this containerd: true = systemd (SystemdCgroup = true), false = cgroupfs. */
  systemdCgroup: boolean;
  /** Which runtime this is (BUNLET_TEST_RUNTIME). */
  runtime: TestRuntimeName;
  release(): Promise<void>;
}

/** The CRI runtimes the tests' private instances can be. */
export type TestRuntimeName = "containerd" | "crio";

/** BUNLET_TEST_RUNTIME: containerd (default) or crio. */
export function testRuntimeFromEnv(): TestRuntimeName {
  const v = process.env.BUNLET_TEST_RUNTIME ?? "";
  if (v === "" || v === "containerd") return "containerd";
  if (v === "crio") return "crio";
  throw new Error(`BUNLET_TEST_RUNTIME=${JSON.stringify(v)}: want containerd or crio`);
}

/** The runtime of this test process's instances. */
export const testRuntime: TestRuntimeName = testRuntimeFromEnv();

/** The runtime's name in CRI Version (and in containerID URIs). */
export const testRuntimeCriName = testRuntime === "crio" ? "cri-o" : "containerd";

/** The control script of this process's runtime (start|stop|status|destroy), under scripts/host. */
const RUNTIME_SCRIPT = testRuntime === "crio" ? "crio.sh" : "containerd.sh";
export const testRuntimeScript = `${SCRIPTS}/${RUNTIME_SCRIPT}`;

/** Env naming an instance's run dir and root, for containerd.sh and crio.sh alike (each reads its own). */
export function runtimeInstanceEnv(dir: string, root: string): Record<string, string> {
  return { BUNLET_CONTAINERD_DIR: dir, BUNLET_CONTAINERD_ROOT: root, BUNLET_CRIO_DIR: dir, BUNLET_CRIO_ROOT: root };
}

/** The CRI socket of this process's runtime in an instance whose run dir is `dir`. */
export function runtimeSocket(dir: string): string {
  return `${dir}/${testRuntime === "crio" ? "crio.sock" : "containerd.sock"}`;
}

/** Integration tests need root (cgroups, mounts, runc) on Linux. */
export function canRunContainerd(): boolean {
  return process.platform === "linux" && process.getuid?.() === 0;
}

/**
 * A runner in a PID namespace of its own (scripts/conformance/run.ts --storage) names its host PID here:
 * its instances are named and reaped by that PID, which the host's /proc shows.
 */
export const HOST_PID_ENV = "BUNLET_TEST_HOST_PID";
const hostPid = Number(process.env[HOST_PID_ENV]) || process.pid;
const tag = `${hostPid}`;
const RUN_DIR = `/run/bunlet/test-${tag}`;
const ROOT_DIR = `/var/lib/bunlet/test-${tag}`;
const env = {
  ...process.env,
  ...runtimeInstanceEnv(RUN_DIR, ROOT_DIR),
  // Interface names are at most 15 characters; the subnet varies with the pid so parallel runs don't clash.
  BUNLET_CNI_BRIDGE: `blt${tag}`.slice(0, 15),
  BUNLET_CNI_SUBNET: `10.89.${(hostPid % 200) + 20}.0/24`,
};

/** BUNLET_CONTAINERD_SYSTEMD_CGROUP as containerd.sh reads it. */
export function systemdCgroupFromEnv(): boolean {
  const v = process.env.BUNLET_CONTAINERD_SYSTEMD_CGROUP ?? "";
  if (v === "1" || v === "true") return true;
  if (v === "" || v === "0" || v === "false") return false;
  throw new Error(`BUNLET_CONTAINERD_SYSTEMD_CGROUP=${JSON.stringify(v)}: want 1/true or 0/false`);
}

function run(script: string, args: string[], extraEnv: Record<string, string> = {}): string {
  const r = spawnSync("bash", [`${SCRIPTS}/${script}`, ...args], { env: { ...env, ...extraEnv }, encoding: "utf8", timeout: 600_000 });
  if (r.status !== 0) {
    throw new Error(`scripts/host/${script} ${args.join(" ")} failed (exit ${r.status}): ${r.stderr}${r.stdout}`);
  }
  return r.stdout;
}

/** Destroys instances left by test processes that died without cleaning up (their pid is gone). */
function reapStaleInstances(): void {
  // In a PID namespace of its own, /proc shows none of the other instances' processes: they are not stale.
  if (!existsSync("/run/bunlet") || process.env[HOST_PID_ENV]) return;
  for (const d of readdirSync("/run/bunlet")) {
    const m = /^test-(\d+)$/.exec(d);
    if (!m || existsSync(`/proc/${m[1]}`)) continue;
    const script = existsSync(`/run/bunlet/${d}/crio.conf`) ? "crio.sh" : "containerd.sh";
    spawnSync("bash", [`${SCRIPTS}/${script}`, "destroy"], {
      env: {
        ...process.env,
        ...runtimeInstanceEnv(`/run/bunlet/${d}`, `/var/lib/bunlet/${d}`),
        BUNLET_CNI_BRIDGE: `blt${m[1]}`.slice(0, 15),
      },
      stdio: "ignore",
      timeout: 60_000,
    });
  }
}

let refs = 0;
let shared: Omit<TestContainerd, "release"> | undefined;

/**
 * Stops and removes one pod sandbox through the CRI, its containers killed first (StopContainer with
 * timeout 0), as the kubelet's killPodWithSyncResult stops the containers before the sandbox.
 * StopPodSandbox alone kills them at once on containerd; CRI-O sends SIGTERM and waits out the call's
 * deadline, less a second, before SIGKILL (server/sandbox_stop_linux.go), a minute for our client.
 */
export async function removeSandbox(cri: CriClient, id: string): Promise<void> {
  for (const c of await cri.listContainers({ podSandboxId: id }).catch(() => [])) await cri.stopContainer(c.id, 0).catch(() => {});
  await cri.stopPodSandbox(id).catch(() => {});
  await cri.removePodSandbox(id);
}

/**
 * Stops and removes pod sandboxes through the CRI (so CNI tears down netns and IP leases properly):
 * every one, or with `node` only that node's (named <pod>-<node>).
 */
export async function removeSandboxes(cri: CriClient, node?: string): Promise<void> {
  for (const s of await cri.listPodSandbox().catch(() => [])) {
    if (node !== undefined && !s.metadata?.name.endsWith(`-${node}`)) continue;
    await removeSandbox(cri, s.id).catch(() => {});
  }
}

export async function acquireContainerd(opts: { systemdCgroup?: boolean } = {}): Promise<TestContainerd> {
  const systemdCgroup = opts.systemdCgroup ?? systemdCgroupFromEnv();
  if (shared && shared.systemdCgroup !== systemdCgroup)
    throw new Error(
      `acquireContainerd: this process's containerd runs with SystemdCgroup = ${shared.systemdCgroup}; a caller asked for ${systemdCgroup} (one driver per test process)`,
    );
  if (!shared) {
    run("setup.sh", []);
    reapStaleInstances();
    if (systemdCgroup && testRuntime === "crio") throw new Error("acquireContainerd: the private CRI-O runs cgroup_manager cgroupfs only");
    const driverEnv = { BUNLET_CONTAINERD_SYSTEMD_CGROUP: systemdCgroup ? "1" : "0" };
    try {
      run(RUNTIME_SCRIPT, ["start"], driverEnv);
    } catch (e) {
      run(RUNTIME_SCRIPT, ["destroy"]);
      throw e;
    }
    const socket = runtimeSocket(RUN_DIR);
    const endpoint = `unix://${socket}`;
    shared = {
      endpoint,
      socket,
      root: ROOT_DIR,
      dir: RUN_DIR,
      cri: createCriClient({ endpoint, timeoutMs: 60_000 }),
      images: { busybox: "bunlet.local/busybox:1", pause: "bunlet.local/pause:1", memhog: "bunlet.local/memhog:1" },
      systemdCgroup,
      runtime: testRuntime,
    };
  }
  refs++;
  const self = shared;
  let released = false;
  return {
    ...self,
    async release() {
      if (released) return;
      released = true;
      if (--refs > 0) return;
      shared = undefined;
      try {
        await removeSandboxes(self.cri);
      } finally {
        self.cri.close();
        run(RUNTIME_SCRIPT, ["destroy"]);
      }
    },
  };
}

/**
 * A containerd of a test file's own beside the process's shared one (another release, another runc):
 * its own run dir, root, bridge and subnet named by `name`; release() destroys it all. `containerdBin`
 * and `runcBin` are containerd.sh's BUNLET_CONTAINERD_BIN and BUNLET_RUNC_BIN.
 */
export async function startOwnContainerd(o: { name: string; containerdBin?: string; runcBin?: string }): Promise<TestContainerd> {
  const own = {
    BUNLET_CONTAINERD_DIR: `/run/bunlet/test-${tag}-${o.name}`,
    BUNLET_CONTAINERD_ROOT: `/var/lib/bunlet/test-${tag}-${o.name}`,
    BUNLET_CNI_BRIDGE: `blt${o.name.slice(0, 2)}${tag}`.slice(0, 15),
    BUNLET_CNI_SUBNET: `10.90.${(hostPid % 200) + 20}.0/24`,
    BUNLET_CONTAINERD_SYSTEMD_CGROUP: "0",
    ...(o.containerdBin ? { BUNLET_CONTAINERD_BIN: o.containerdBin } : {}),
    ...(o.runcBin ? { BUNLET_RUNC_BIN: o.runcBin } : {}),
  };
  run("setup.sh", []);
  try {
    run("containerd.sh", ["start"], own);
  } catch (e) {
    run("containerd.sh", ["destroy"], own);
    throw e;
  }
  const socket = `${own.BUNLET_CONTAINERD_DIR}/containerd.sock`;
  const endpoint = `unix://${socket}`;
  const cri = createCriClient({ endpoint, timeoutMs: 60_000 });
  return {
    endpoint,
    socket,
    root: own.BUNLET_CONTAINERD_ROOT,
    dir: own.BUNLET_CONTAINERD_DIR,
    cri,
    images: { busybox: "bunlet.local/busybox:1", pause: "bunlet.local/pause:1", memhog: "bunlet.local/memhog:1" },
    systemdCgroup: false,
    runtime: "containerd",
    async release() {
      try {
        await removeSandboxes(cri);
      } finally {
        cri.close();
        run("containerd.sh", ["destroy"], own);
      }
    },
  };
}

/** Env for running scripts/host/containerd.sh (or crio.sh: testRuntimeScript) against this process's test instance. */
export const testContainerdEnv = env;

/** Pods through kuberuntime, killed at once, then removed: every one, or with `node` only that node's (named <pod>-<node>). */
export async function removeNodePods(rt: Runtime, node?: string): Promise<void> {
  for (const p of await rt.getPods(true).catch(() => [])) {
    if (node !== undefined && !p.name.endsWith(`-${node}`)) continue;
    await rt.killPod(p, 0).catch(() => {});
    await rt.removePod(p.uid).catch(() => {});
  }
}

/**
 * The end of an afterAll that ran pods on `ctd`: `removePods`, then, even when that throws, the cgroup
 * tree `cgroupRoot` and the directories `dirs` are removed and containerd is released.
 */
export async function tearDownPods(ctd: TestContainerd | undefined, removePods: () => Promise<void>, cgroupRoot: string, ...dirs: string[]): Promise<void> {
  try {
    await removePods();
  } finally {
    removeCgroupTree(cgroupRoot);
    for (const d of dirs) removeTree(d);
    await ctd?.release();
  }
}
