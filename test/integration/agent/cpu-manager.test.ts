// The static CPU manager on a private containerd: with CPU 0 reserved (reservedSystemCPUs), a Guaranteed
// `cpu: 1` pod gets CPU 1 for itself — in its container's cpuset cgroup and as the CPUs its process may
// run on — while a BestEffort pod is kept on the shared pool (CPU 0); the assignment is in
// <rootDir>/cpu_manager_state, survives a restart of the agent, and a second Guaranteed `cpu: 1` pod is
// refused at admission with upstream's UnexpectedAdmissionError. Needs root and at least two CPUs.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { basename, join } from "node:path";
import { createNodeAgent, type NodeAgent } from "../../../src/agent.ts";
import { loadConfig } from "../../../src/config/load.ts";
import { isContainerCgroupLeaf } from "../../../src/cri/container-cgroup.ts";
import type { Pod } from "../../../src/pod/types.ts";
import { canRunContainerd } from "../../support/containerd.ts";
import { staticPodYaml } from "../../support/manifests.ts";
import { startStandaloneNode, type StandaloneNode } from "../../support/standalone.ts";
import { until } from "../../support/wait.ts";

const PID = process.pid;
const CGROUP_ROOT = `/bunlet-cpuman-${PID}`;
const BASE = `/tmp/bunlet-cpuman-${PID}`;
const NODE = "cpuman";
const ROOT_DIR = join(BASE, "root");
const STATE_FILE = join(ROOT_DIR, "cpu_manager_state");
const SLEEP = ["sh", "-c", "exec sleep 3600"];
const CPUSET_V1 = "/sys/fs/cgroup/cpuset";

const guaranteed = (name: string, image: string) =>
  staticPodYaml(name, {
    image,
    command: SLEEP,
    terminationGracePeriodSeconds: 1,
    container: "      resources:\n        requests: { cpu: 1, memory: 32Mi }\n        limits: { cpu: 1, memory: 32Mi }\n",
  });

describe.skipIf(!canRunContainerd() || availableParallelism() < 2)("static CPU manager on containerd", () => {
  let node: StandaloneNode;
  let restarted: NodeAgent | undefined;
  let base: string;

  const pods = async () => ((await (await fetch(`${base}/pods`)).json()) as { items: Pod[] }).items;
  const podNamed = async (name: string) => (await pods()).find((p) => p.metadata.name === `${name}-${NODE}`);
  const running = (name: string) =>
    until(`${name} Running`, async () => {
      const p = await podNamed(name);
      return p?.status?.phase === "Running" ? p : undefined;
    });
  const containerId = (p: Pod) => p.status!.containerStatuses![0]!.containerID!.replace(/^[a-z-]+:\/\//, "");
  /** cpuset.cpus of the container's own cgroup (v1, under this test's cgroup root). */
  const cgroupCpus = (id: string) => {
    const root = join(CPUSET_V1, CGROUP_ROOT);
    // By the runtime's name for it (containerd: <id>, CRI-O: crio-<id>; not CRI-O's crio-conmon-<id> beside it).
    const dir = (readdirSync(root, { recursive: true }) as string[]).find((d) => isContainerCgroupLeaf(basename(d), id));
    return dir ? readFileSync(join(root, dir, "cpuset.cpus"), "utf8").trim() : undefined;
  };
  /** The CPUs the container's process may run on, as it sees them. */
  const allowedCpus = async (id: string) => {
    const r = await node.ctd.cri.execSync(id, ["grep", "Cpus_allowed_list", "/proc/self/status"], 10);
    return new TextDecoder().decode(r.stdout).split(":")[1]?.trim();
  };

  beforeAll(async () => {
    node = await startStandaloneNode({
      base: BASE,
      cgroupRoot: CGROUP_ROOT,
      node: NODE,
      config: ["cpuManagerPolicy: static", 'reservedSystemCPUs: "0"', "cpuManagerReconcilePeriod: 1s"],
      prepare: ({ ctd, manifests }) => {
        writeFileSync(join(manifests, "g1.yaml"), guaranteed("g1", ctd.images.busybox));
        writeFileSync(join(manifests, "be.yaml"), staticPodYaml("be", { image: ctd.images.busybox, command: SLEEP, terminationGracePeriodSeconds: 1 }));
      },
    });
    base = node.url;
  }, 600_000);

  afterAll(async () => {
    await restarted?.stop();
    await node?.stop();
  }, 120_000);

  test("the Guaranteed container runs on CPU 1 alone, the BestEffort one on the shared CPU 0", async () => {
    const g1 = containerId(await running("g1"));
    const be = containerId(await running("be"));
    expect(cgroupCpus(g1)).toBe("1");
    expect(await allowedCpus(g1)).toBe("1");
    // Created before or after g1's allocation: the reconcile loop brings it to the shared pool.
    await until("be on the shared pool", () => cgroupCpus(be) === "0");
    expect(await allowedCpus(be)).toBe("0");
  }, 120_000);

  test("the state file lists the assignment in upstream's format", async () => {
    const g1 = await running("g1");
    const state = JSON.parse(readFileSync(STATE_FILE, "utf8"));
    expect([state.policyName, state.defaultCpuSet, state.entries]).toEqual(["static", "0", { [g1.metadata.uid!]: { main: "1" } }]);
    expect(JSON.parse(state.data).entries).toEqual(state.entries);
  });

  test("a second Guaranteed cpu: 1 pod is refused at admission as upstream", async () => {
    writeFileSync(join(node.manifests, "g2.yaml"), guaranteed("g2", node.ctd.images.busybox));
    const g2 = await until("g2 refused", async () => {
      const p = await podNamed("g2");
      return p?.status?.phase === "Failed" ? p : undefined;
    });
    expect(g2.status!.reason).toBe("UnexpectedAdmissionError");
    expect(g2.status!.message).toBe("Allocate failed due to not enough cpus available to satisfy request: requested=1, available=0, which is unexpected");
  }, 60_000);

  test("after a restart of the agent the assignment is unchanged", async () => {
    const before = readFileSync(STATE_FILE, "utf8");
    const g1 = containerId(await running("g1"));
    await node.agent.stop();
    const loaded = await loadConfig(["--config", join(BASE, "kubelet.yaml"), `--hostname-override=${NODE}`, `--root-dir=${ROOT_DIR}`]);
    restarted = createNodeAgent(loaded, { protectSelf: false });
    await restarted.start();
    expect(await restarted.runtimeReady).toBe(true);
    base = restarted.servers()!.get("main")!.url;
    expect(containerId(await running("g1"))).toBe(g1);
    expect(JSON.parse(readFileSync(STATE_FILE, "utf8")).entries).toEqual(JSON.parse(before).entries);
    expect(cgroupCpus(g1)).toBe("1");
    const g2 = await until("g2 refused again", async () => {
      const p = await podNamed("g2");
      return p?.status?.phase === "Failed" ? p : undefined;
    });
    expect(g2.status!.reason).toBe("UnexpectedAdmissionError");
  }, 120_000);
});
