// Mirror pods and events against the API-server double with the real containerd and kubectl: a
// static pod shows as a mirror pod (owned by the Node, status patched from the static pod),
// recreated when deleted, replaced when its manifest changes, deleted when the manifest goes; the
// kubelet's events (node, pod, container) are in the API, repeated ones counted.
// Needs root and containerd (skipped otherwise).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { NodeAgent } from "../../../src/agent.ts";
import type { ApiServerDouble } from "../../support/apiserver/index.ts";
import { canRunContainerd, type TestContainerd } from "../../support/containerd.ts";
import { clusterPaths, joinDouble, sleeperPodYaml, type JoinedNode } from "../../support/cluster.ts";
import { until } from "../../support/wait.ts";

const { node: NODE, base: BASE } = clusterPaths("mirror");
const MIRROR = `web-${NODE}`;

describe.skipIf(!canRunContainerd())("mirror pods and events", () => {
  let ctd: TestContainerd;
  let api: ApiServerDouble;
  let agent: NodeAgent;
  let c: JoinedNode;
  const manifest = join(BASE, "manifests", "web.yaml");

  const kubectl = (...args: string[]) => c.kubectl(...args);
  const mirror = () => api.store.get(`pods/kube-system/${MIRROR}`);
  const events = async () => (await api.store.list("events/")).items;
  const writeManifest = (cmd: string) =>
    writeFileSync(
      manifest,
      [
        "apiVersion: v1",
        "kind: Pod",
        "metadata: { name: web, namespace: kube-system, labels: { tier: edge } }",
        `spec: { terminationGracePeriodSeconds: 1, containers: [{ name: c, image: "${ctd.images.busybox}", command: [sh, -c, "${cmd}"] }] }`,
      ].join("\n"),
    );

  beforeAll(async () => {
    // The node's own identity (system:node:<name>), so NodeRestriction applies to what it creates.
    c = await joinDouble({
      name: "mirror",
      config: ["nodeStatusUpdateFrequency: 1s", "nodeLeaseDurationSeconds: 4"],
      prepare: (x) => {
        ctd = x.ctd;
        writeManifest("exec sleep 3600");
      },
    });
    ({ ctd, api, agent } = c);
  }, 600_000);

  afterAll(async () => {
    await c?.stop();
  }, 120_000);

  test("a static pod shows as a mirror pod: config.mirror = its hash, owned by the Node, status Running, in kubectl get pods", async () => {
    const m = await until(
      "mirror pod Running",
      async () => {
        const o = await mirror();
        return o?.status?.phase === "Running" ? o : undefined;
      },
      120_000,
    );
    const staticPod = agent.pods.lifecycle.pods().find((p) => p.metadata.name === MIRROR)!;
    const hash = staticPod.metadata.annotations!["kubernetes.io/config.hash"];
    expect(m.metadata.annotations).toMatchObject({
      "kubernetes.io/config.mirror": hash,
      "kubernetes.io/config.hash": hash,
      "kubernetes.io/config.source": "file",
    });
    expect(m.metadata.uid).not.toBe(staticPod.metadata.uid);
    const node = (await api.store.get(`nodes//${NODE}`))!;
    expect(m.metadata.ownerReferences).toEqual([{ apiVersion: "v1", kind: "Node", name: NODE, uid: node.metadata.uid, controller: true }]);
    expect(m.metadata.labels).toEqual({ tier: "edge" });
    expect(m.status.podIP).toBe(agent.pods.lifecycle.getPodStatus(staticPod.metadata.uid)!.podIP);
    const out = await kubectl("get", "pods", "-A", "-o", "wide");
    expect(out).toMatch(new RegExp(`kube-system\\s+${MIRROR}\\s+1/1\\s+Running\\s+0\\s+\\S+\\s+\\S+\\s+${NODE}`));
    // The API pod source never hands the mirror to the pod workers: one pod, not two.
    expect(agent.pods.lifecycle.pods().filter((p) => p.metadata.name === MIRROR)).toHaveLength(1);
  }, 180_000);

  test("kubectl delete pod <mirror> → a new mirror (new UID); the static pod keeps running, not restarted", async () => {
    const before = (await mirror())!.metadata.uid;
    const containers = (await ctd.cri.listContainers({ state: { state: "CONTAINER_RUNNING" } })).filter(
      (c: any) => c.metadata?.name === "c" && c.labels["io.kubernetes.pod.name"] === MIRROR,
    );
    await kubectl("delete", "pod", "-n", "kube-system", MIRROR, "--wait=false");
    const m = await until(
      "mirror recreated",
      async () => {
        const o = await mirror();
        return o && o.metadata.uid !== before && !o.metadata.deletionTimestamp && o.status?.phase === "Running" ? o : undefined;
      },
      60_000,
    );
    expect(m.metadata.annotations["kubernetes.io/config.mirror"]).toBeDefined();
    const after = (await ctd.cri.listContainers({ state: { state: "CONTAINER_RUNNING" } })).filter(
      (c: any) => c.metadata?.name === "c" && c.labels["io.kubernetes.pod.name"] === MIRROR,
    );
    expect(after.map((c: any) => c.id)).toEqual(containers.map((c: any) => c.id));
  }, 120_000);

  test("a changed manifest → the mirror is replaced with the new hash", async () => {
    const old = (await mirror())!;
    writeManifest("exec sleep 3601");
    const m = await until(
      "mirror replaced",
      async () => {
        const o = await mirror();
        return o &&
          o.metadata.uid !== old.metadata.uid &&
          o.metadata.annotations["kubernetes.io/config.mirror"] !== old.metadata.annotations["kubernetes.io/config.mirror"]
          ? o
          : undefined;
      },
      60_000,
    );
    const staticPod = agent.pods.lifecycle.pods().find((p) => p.metadata.name === MIRROR)!;
    expect(m.metadata.annotations["kubernetes.io/config.mirror"]).toBe(staticPod.metadata.annotations!["kubernetes.io/config.hash"]);
    expect(m.spec.containers[0].command).toEqual(["sh", "-c", "exec sleep 3601"]);
  }, 120_000);

  test("events in the API: node (Starting, conditions) and the pod's (Pulled, Created, Started, Killing), shown by kubectl", async () => {
    await until("container events", async () => (await events()).some((e) => e.reason === "Killing" && e.involvedObject.name === MIRROR), 30_000);
    const evs = await events();
    const nodeReasons = evs.filter((e) => e.involvedObject.kind === "Node").map((e) => e.reason);
    expect(nodeReasons).toEqual(expect.arrayContaining(["Starting", "NodeHasSufficientMemory", "NodeHasNoDiskPressure", "NodeHasSufficientPID"]));
    const starting = evs.find((e) => e.reason === "Starting")!;
    expect(starting).toMatchObject({
      type: "Normal",
      message: "Starting kubelet.",
      source: { component: "kubelet", host: NODE },
      involvedObject: { kind: "Node", name: NODE, uid: NODE },
      metadata: { namespace: "default" },
    });
    const pod = evs.filter((e) => e.involvedObject.name === MIRROR);
    expect(pod.map((e) => e.reason)).toEqual(expect.arrayContaining(["Pulled", "Created", "Started", "Killing"]));
    expect(pod.find((e) => e.reason === "Started")).toMatchObject({
      message: "Started container c",
      metadata: { namespace: "kube-system" },
      involvedObject: { kind: "Pod", namespace: "kube-system", fieldPath: "spec.containers{c}" },
    });
    expect(pod.find((e) => e.reason === "Pulled")!.message).toBe(`Container image "${ctd.images.busybox}" already present on machine`);
    expect(pod.find((e) => e.reason === "Killing")!.message).toBe("Stopping container c");
    const out = await kubectl("get", "events", "-A");
    expect(out).toMatch(/LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE/);
    expect(out).toMatch(new RegExp(`Normal\\s+Starting\\s+node/${NODE}\\s+Starting kubelet\\.`));
    expect(out).toMatch(new RegExp(`Normal\\s+Started\\s+pod/${MIRROR}\\s+Started container c`));
    const described = await kubectl("describe", "node", NODE);
    expect(described).toMatch(/Events:[\s\S]*Normal\s+Starting\s+\S+\s+kubelet\s+Starting kubelet\./);
  }, 60_000);

  test("a repeated event is one Event whose count grows (PATCHed), as kubectl describe pod shows", async () => {
    await c.apply(
      "probe.yaml",
      sleeperPodYaml(c, "unready", "", ', readinessProbe: { exec: { command: [sh, -c, "echo not yet; exit 1"] }, periodSeconds: 1 }'),
    );
    const unhealthy = await until(
      "Unhealthy counted",
      async () => {
        const e = (await events()).filter((x) => x.reason === "Unhealthy" && x.involvedObject.name === "unready");
        return e.length === 1 && e[0]!.count >= 3 ? e : undefined;
      },
      60_000,
    );
    expect(unhealthy[0]!).toMatchObject({ type: "Warning", message: "Readiness probe failed: not yet", involvedObject: { fieldPath: "spec.containers{c}" } });
    expect(api.requests.some((r) => r.method === "PATCH" && r.path.startsWith(`/api/v1/namespaces/default/events/${unhealthy[0]!.metadata.name}`))).toBe(true);
    const described = await kubectl("describe", "pod", "unready");
    expect(described).toMatch(/Warning\s+Unhealthy\s+\S+ \(x\d+ over \S+\)\s+kubelet\s+Readiness probe failed: not yet/);
    await kubectl("delete", "pod", "unready", "--timeout=60s");
  }, 120_000);

  test("kubectl cordon / uncordon → NodeNotSchedulable / NodeSchedulable", async () => {
    await kubectl("cordon", NODE);
    await until(
      "NodeNotSchedulable",
      async () => (await events()).find((e) => e.reason === "NodeNotSchedulable" && e.message === `Node ${NODE} status is now: NodeNotSchedulable`),
      15_000,
    );
    await kubectl("uncordon", NODE);
    await until("NodeSchedulable", async () => (await events()).find((e) => e.reason === "NodeSchedulable"), 15_000);
  }, 60_000);

  test("events recorded while the API server is away are written when it returns (the sync loop never waits)", async () => {
    await api.stop();
    writeFileSync(
      join(BASE, "manifests", "later.yaml"),
      [
        "apiVersion: v1",
        "kind: Pod",
        "metadata: { name: later, namespace: default }",
        `spec: { terminationGracePeriodSeconds: 1, containers: [{ name: c, image: "${ctd.images.busybox}", command: [sh, -c, "exec sleep 3600"] }] }`,
      ].join("\n"),
    );
    // The pod starts with the API server down: recording its events does not hold it up.
    await until(
      "static pod Running offline",
      () => agent.pods.lifecycle.listPodsForApi().find((p) => p.metadata.name === `later-${NODE}` && p.status?.phase === "Running"),
      60_000,
    );
    await api.start();
    // The writer retries every 10 s (the first wait randomised).
    const started = await until(
      "Started event written",
      async () => (await events()).find((e) => e.reason === "Started" && e.involvedObject.name === `later-${NODE}`),
      60_000,
    );
    expect(started.message).toBe("Started container c");
    rmSync(join(BASE, "manifests", "later.yaml"));
  }, 150_000);

  test("the manifest removed → the static pod stops and its mirror is deleted", async () => {
    rmSync(manifest);
    await until("mirror deleted", async () => (await mirror()) === undefined, 60_000);
    expect(agent.pods.lifecycle.pods().some((p) => p.metadata.name === MIRROR)).toBe(false);
  }, 120_000);
});
