// Static pod lifecycle through the whole node agent (createNodeAgent, as `bunlet` runs it) on a private
// containerd (or CRI-O, BUNLET_TEST_RUNTIME=crio): the agent rides out a runtime restart (containers
// survive it: containerd's shims, CRI-O's conmons keep them running), an edited manifest recreates the
// pod under a new UID, a removed manifest stops its pod within terminationGracePeriodSeconds, an exec
// readiness probe drives the Ready condition, and an invalid manifest is reported with its file and
// field while its neighbours run. Skipped when not root.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { existsSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ConsolaReporter } from "consola/core";
import type { NodeAgent } from "../../../src/agent.ts";
import { log } from "../../../src/log.ts";
import { createKubeRuntime } from "../../../src/pod/kuberuntime/manager.ts";
import type { Pod } from "../../../src/pod/types.ts";
import { canRunContainerd, removeNodePods, testContainerdEnv, testRuntimeCriName, testRuntimeScript, type TestContainerd } from "../../support/containerd.ts";
import { staticPodYaml } from "../../support/manifests.ts";
import { startStandaloneNode, type StandaloneNode } from "../../support/standalone.ts";
import { until as waitUntil, type Polled } from "../../support/wait.ts";

const PID = process.pid;
const CGROUP_ROOT = `/bunlet-podlc-${PID}`;
const BASE = `/tmp/bunlet-podlc-${PID}`;
const MANIFESTS = join(BASE, "manifests");
const NODE = "podlctest";

/** A busybox static pod; `container` is extra YAML for the container, indented 6 (probes …). */
const pod = (name: string, image: string, command: string[], opts: { grace?: number; labels?: Record<string, string>; container?: string } = {}) =>
  staticPodYaml(name, { image, command, terminationGracePeriodSeconds: opts.grace ?? 1, labels: opts.labels, container: opts.container });

const SLEEP = ["sh", "-c", "exec sleep 3600"];

/** This file's polls wait 40 s unless a call says otherwise. */
const until = <T>(what: string, fn: () => Polled<T> | Promise<Polled<T>>, timeoutMs = 40_000) => waitUntil(what, fn, timeoutMs);

describe.skipIf(!canRunContainerd())("static pod lifecycle through the node agent on the tests' runtime", () => {
  let node: StandaloneNode;
  let ctd: TestContainerd;
  let agent: NodeAgent;
  let base: string;
  const logLines: string[] = [];
  const capture: ConsolaReporter = { log: (o) => void logLines.push(o.args.map(String).join(" ")) };

  const pods = async () => {
    const res = await fetch(`${base}/pods`);
    if (res.status !== 200) throw new Error(`/pods: HTTP ${res.status}`);
    return ((await res.json()) as { items: Pod[] }).items;
  };
  const podNamed = async (name: string) => (await pods()).find((p) => p.metadata.name === `${name}-${NODE}`);
  const running = (name: string) =>
    until(`${name} Running`, async () => {
      const p = await podNamed(name);
      return p?.status?.phase === "Running" && p.status.containerStatuses?.[0]?.state.running ? p : undefined;
    });
  /** The pod's containers as the runtime has them (CRI labels carry the pod UID). */
  const containersOf = async (uid: string) => (await ctd.cri.listContainers()).filter((c) => c.labels?.["io.kubernetes.pod.uid"] === uid);
  const runtimeScript = (cmd: "stop" | "start") => {
    const r = spawnSync("bash", [testRuntimeScript, cmd], { env: testContainerdEnv, encoding: "utf8", timeout: 60_000 });
    if (r.status !== 0) throw new Error(`${testRuntimeScript} ${cmd} failed (exit ${r.status}): ${r.stderr}`);
  };

  beforeAll(async () => {
    log.addReporter(capture);
    node = await startStandaloneNode({ base: BASE, cgroupRoot: CGROUP_ROOT, node: NODE, agent: { runtimeRetryMs: 200 } });
    ({ ctd, agent, url: base } = node);
  }, 600_000);

  afterAll(async () => {
    log.removeReporter(capture);
    await node?.stop(async () => {
      // The runtime may have been left stopped by a failed restart test.
      if (!existsSync(ctd.socket)) spawnSync("bash", [testRuntimeScript, "start"], { env: testContainerdEnv, stdio: "ignore", timeout: 60_000 });
      await removeNodePods(createKubeRuntime({ cri: ctd.cri }), NODE);
    });
  }, 120_000);

  test("the runtime restarted under a running static pod: /pods stays served, the container survives, new manifests start", async () => {
    writeFileSync(join(MANIFESTS, "survivor.yaml"), pod("survivor", ctd.images.busybox, SLEEP));
    const before = await running("survivor");
    const uid = before.metadata.uid!;
    const containerId = before.status!.containerStatuses![0]!.containerID;
    const [sandbox] = (await ctd.cri.listPodSandbox()).filter((s) => s.metadata?.uid === uid && s.state === "SANDBOX_READY");
    expect(sandbox).toBeDefined();

    // /pods polled throughout: every answer must be a 200 with the pod in it.
    const failures: string[] = [];
    let polls = 0;
    let polling = true;
    const poller = (async () => {
      while (polling) {
        try {
          const p = (await pods()).find((x) => x.metadata.uid === uid);
          if (!p) failures.push("survivor missing from /pods");
          polls++;
        } catch (e) {
          failures.push((e as Error).message);
        }
        await Bun.sleep(100);
      }
    })();
    try {
      const seen = logLines.length;
      runtimeScript("stop");
      expect(existsSync(ctd.socket)).toBe(false);
      // Down until the runtime calls really fail (past the CRI client's 5 s UNAVAILABLE retry budget),
      // not just wait it out.
      await until("a PLEG relist failing", () => logLines.slice(seen).some((l) => l.includes("PLEG relist failed")), 20_000);
      runtimeScript("start");
      // The shim (conmon) kept the container running: the runtime reports it running again, and the
      // agent keeps that container rather than recreating it (same ID, restartCount 0).
      const after = await until("survivor Running after the restart", async () => {
        const p = await podNamed("survivor");
        const cs = p?.status?.containerStatuses?.[0];
        return p?.status?.phase === "Running" && cs?.state.running && cs.containerID === containerId ? p : undefined;
      });
      expect(after.metadata.uid).toBe(uid);
      expect(after.status!.containerStatuses![0]!.restartCount).toBe(0);
      const live = await containersOf(uid);
      expect(live.filter((c) => c.state === "CONTAINER_RUNNING").map((c) => `${testRuntimeCriName}://${c.id}`)).toEqual([containerId!]);
      expect(live.length).toBe(1); // nothing was recreated
      const sandboxes = (await ctd.cri.listPodSandbox()).filter((s) => s.metadata?.uid === uid);
      expect(sandboxes.map((s) => [s.id, s.state])).toEqual([[sandbox!.id, "SANDBOX_READY"]]);
    } finally {
      polling = false;
      await poller;
    }
    expect(failures).toEqual([]);
    expect(polls).toBeGreaterThan(10);

    // A manifest written after the restart is started on the restarted runtime.
    writeFileSync(join(MANIFESTS, "newcomer.yaml"), pod("newcomer", ctd.images.busybox, SLEEP));
    await running("newcomer");
    unlinkSync(join(MANIFESTS, "survivor.yaml"));
    unlinkSync(join(MANIFESTS, "newcomer.yaml"));
    await until("survivor and newcomer gone from the runtime", async () => (await containersOf(uid)).length === 0);
  }, 60_000);

  test("an edited manifest recreates the pod under a new UID: old containers stopped, new ones running", async () => {
    const file = join(MANIFESTS, "edited.yaml");
    // `sleep` as the container's init ignores SIGTERM, so the old pod takes its whole 2 s grace period.
    writeFileSync(file, pod("edited", ctd.images.busybox, SLEEP, { labels: { version: "1" }, grace: 2 }));
    const v1 = await running("edited");
    const oldUid = v1.metadata.uid!;
    const t0 = Date.now();
    writeFileSync(file, pod("edited", ctd.images.busybox, ["sh", "-c", "echo v2; exec sleep 3600"], { labels: { version: "2" }, grace: 2 }));
    const v2 = await until("edited v2 Running", async () => {
      const p = await podNamed("edited");
      return p && p.metadata.uid !== oldUid && p.status?.phase === "Running" && p.status.containerStatuses?.[0]?.state.running ? p : undefined;
    });
    expect(v2.metadata.labels).toEqual({ version: "2" });
    // As upstream (allowStaticPodStart), the new pod starts only once its predecessor has stopped: its
    // sandbox is created after the old pod's grace period, not right after the edit.
    const [newSandbox] = (await ctd.cri.listPodSandbox()).filter((s) => s.metadata?.uid === v2.metadata.uid);
    expect(newSandbox!.createdAt / 1e6 - t0).toBeGreaterThanOrEqual(1_800);
    // Only the new pod is listed under the name.
    expect((await pods()).filter((p) => p.metadata.name === `edited-${NODE}`).map((p) => p.metadata.uid)).toEqual([v2.metadata.uid]);
    // The old pod's containers are stopped (and then removed); the new one runs the new command.
    await until("old edited containers stopped", async () => (await containersOf(oldUid)).every((c) => c.state !== "CONTAINER_RUNNING"));
    expect((await ctd.cri.listPodSandbox()).filter((s) => s.metadata?.uid === oldUid && s.state === "SANDBOX_READY")).toEqual([]);
    const now = await containersOf(v2.metadata.uid!);
    expect(now.filter((c) => c.state === "CONTAINER_RUNNING").length).toBe(1);
    // The verbose status carries the OCI spec the container was created from.
    const status = await ctd.cri.containerStatus(now.find((c) => c.state === "CONTAINER_RUNNING")!.id, true);
    expect(JSON.stringify(status.info)).toContain("echo v2");
    unlinkSync(file);
    await until("edited gone from the runtime", async () => (await containersOf(v2.metadata.uid!)).length === 0);
  }, 60_000);

  test("a removed manifest stops its pod within terminationGracePeriodSeconds (SIGTERM ignored) and drops it from /pods", async () => {
    const file = join(MANIFESTS, "stubborn.yaml");
    writeFileSync(file, pod("stubborn", ctd.images.busybox, ["sh", "-c", 'trap "" TERM; sleep 1000'], { grace: 2 }));
    const p = await running("stubborn");
    const uid = p.metadata.uid!;
    const id = p.status!.containerStatuses![0]!.containerID!.replace(/^[a-z-]+:\/\//, "");
    const t0 = Date.now();
    unlinkSync(file);
    await until("stubborn out of /pods", async () => !(await podNamed("stubborn")), 10_000);
    const stoppedMs = await until(
      "stubborn's container exited",
      async () => {
        const c = (await containersOf(uid)).find((x) => x.id === id);
        return !c || c.state === "CONTAINER_EXITED" ? Date.now() - t0 : undefined;
      },
      20_000,
    );
    // SIGTERM is ignored, so it runs until the 2 s grace period ends and SIGKILL: ≈2 s, not the 30 s default.
    expect(stoppedMs).toBeGreaterThanOrEqual(1_800);
    expect(stoppedMs).toBeLessThan(10_000);
    // Once exited, the runtime's own record (when the container was not removed yet) says SIGKILL at ≈2 s.
    const dead = (await ctd.cri.containerStatus(id).catch(() => undefined))?.status;
    if (dead) {
      expect(dead.exitCode).toBe(137);
      expect(dead.finishedAt / 1e6 - t0).toBeGreaterThanOrEqual(1_800);
    }
    await until("stubborn gone from the runtime", async () => (await containersOf(uid)).length === 0);
  }, 60_000);

  test("an exec readiness probe failing then succeeding turns Ready False, then True", async () => {
    const file = join(MANIFESTS, "probed.yaml");
    writeFileSync(
      file,
      pod("probed", ctd.images.busybox, ["sh", "-c", "sleep 4; touch /tmp/ready; exec sleep 3600"], {
        container: "      readinessProbe:\n        exec: { command: [cat, /tmp/ready] }\n        periodSeconds: 1\n        failureThreshold: 1\n",
      }),
    );
    const ready = (p: Pod | undefined) => p?.status?.conditions?.find((c) => c.type === "Ready")?.status;
    const notReady = await until("probed Running and not Ready", async () => {
      const p = await podNamed("probed");
      return p?.status?.phase === "Running" && ready(p) === "False" ? p : undefined;
    });
    expect(notReady.status!.containerStatuses![0]!.ready).toBe(false);
    const isReady = await until("probed Ready", async () => {
      const p = await podNamed("probed");
      return ready(p) === "True" ? p : undefined;
    });
    expect(isReady.status!.containerStatuses![0]!.ready).toBe(true);
    expect(isReady.status!.conditions!.find((c) => c.type === "ContainersReady")?.status).toBe("True");
    unlinkSync(file);
    await until("probed gone from the runtime", async () => (await containersOf(isReady.metadata.uid!)).length === 0);
  }, 60_000);

  test("an invalid manifest beside a valid one: the valid pod runs, the invalid one is reported with file and field, and runs once fixed", async () => {
    const bad = join(MANIFESTS, "broken.yaml");
    writeFileSync(join(MANIFESTS, "fine.yaml"), pod("fine", ctd.images.busybox, SLEEP));
    writeFileSync(bad, pod("broken", ctd.images.busybox, SLEEP).replace("spec:\n", "spec:\n  restartPolicy: Sometimes\n"));
    await running("fine");
    const errors = await until("broken.yaml reported", () => {
      const e = agent.pods.lifecycle.manifestErrors().filter((x) => x.file === bad);
      return e.length > 0 ? e : undefined;
    });
    expect(errors.map((e) => e.field)).toEqual(["spec.restartPolicy"]);
    expect(logLines.some((l) => l.includes("static pod manifest rejected") && l.includes(`file=${bad}`) && l.includes("field=spec.restartPolicy"))).toBe(true);
    expect(await podNamed("broken")).toBeUndefined();

    writeFileSync(bad, pod("broken", ctd.images.busybox, SLEEP));
    await running("broken");
    expect(agent.pods.lifecycle.manifestErrors()).toEqual([]);
    expect((await podNamed("fine"))?.status?.phase).toBe("Running");
    const uids = (await pods()).filter((p) => /^(fine|broken)-/.test(p.metadata.name)).map((p) => p.metadata.uid!);
    unlinkSync(bad);
    unlinkSync(join(MANIFESTS, "fine.yaml"));
    await until("fine and broken gone from the runtime", async () => (await Promise.all(uids.map(containersOf))).every((c) => c.length === 0));
  }, 60_000);
});
