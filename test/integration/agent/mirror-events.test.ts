// Mirror pods and events as a real control plane (test/support/upstream: kube-apiserver with
// NodeRestriction) and kubectl show them: a static pod shows as a mirror pod (owned by the Node, status
// from the static pod), recreated when deleted, replaced when its manifest changes, deleted when the
// manifest goes; the kubelet's events (node, pod, container) are in the API, a repeated one counted on one
// Event the node patches (the API server's audit log shows the patches). Events recorded while the API
// server is away: apiserver-restart.test.ts (the double). Needs root, containerd and the upstream binaries.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { sleeperPodYaml } from "../../support/cluster.ts";
import { canRunContainerd } from "../../support/containerd.ts";
import { NODE_NAME, startUpstreamCluster, upstreamBinDir, type UpstreamCluster } from "../../support/upstream/index.ts";
import { until } from "../../support/wait.ts";

const MIRROR = `web-${NODE_NAME}`;
const bin = upstreamBinDir();
if (!bin.dir) console.warn(`skipping the mirror pod and event tests: ${bin.why}`);

describe.skipIf(!canRunContainerd() || !bin.dir)("mirror pods and events", () => {
  let c: UpstreamCluster;
  let image = "";
  let manifest = "";
  const kubectl = (...args: string[]) => c.cp.kubectl(...args);
  const mirror = () => c.json("get", "pod", "-n", "kube-system", MIRROR).catch(() => undefined);
  const events = async (): Promise<any[]> => (await c.json("get", "events", "-A")).items;
  /** The static pod's running containers, from containerd. */
  const containers = async () =>
    (await c.n.ctd.cri.listContainers({ state: { state: "CONTAINER_RUNNING" } })).filter(
      (x: any) => x.metadata?.name === "c" && x.labels["io.kubernetes.pod.name"] === MIRROR,
    );
  const writeManifest = (cmd: string) =>
    writeFileSync(
      manifest,
      [
        "apiVersion: v1",
        "kind: Pod",
        "metadata: { name: web, namespace: kube-system, labels: { tier: edge } }",
        `spec: { terminationGracePeriodSeconds: 1, containers: [{ name: c, image: "${image}", command: [sh, -c, "${cmd}"] }] }`,
      ].join("\n"),
    );

  beforeAll(async () => {
    c = await startUpstreamCluster({
      name: "mirror",
      binDir: bin.dir!,
      audit: true,
      config: ["nodeStatusUpdateFrequency: 1s"],
      prepare: (x) => {
        image = x.ctd.images.busybox;
        manifest = join(x.manifests, "web.yaml");
        writeManifest("exec sleep 3600");
      },
    });
  }, 300_000);

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
      { intervalMs: 500 },
    );
    const hash = m.metadata.annotations["kubernetes.io/config.hash"];
    expect(hash).toMatch(/^[0-9a-f]{32}$/);
    expect(m.metadata.annotations).toMatchObject({ "kubernetes.io/config.mirror": hash, "kubernetes.io/config.source": "file" });
    // The mirror is the API's copy: its UID is not the static pod's (the hash).
    expect(m.metadata.uid).not.toBe(hash);
    const node = await c.json("get", "node", c.n.node);
    expect(m.metadata.ownerReferences).toEqual([{ apiVersion: "v1", kind: "Node", name: c.n.node, uid: node.metadata.uid, controller: true }]);
    expect(m.metadata.labels).toEqual({ tier: "edge" });
    // One pod runs for it (the API pod source never hands the mirror to the pod workers), at the mirror's IP.
    const sandboxes = (await c.n.ctd.cri.listPodSandbox()).filter((s) => s.metadata?.name === MIRROR && s.state === "SANDBOX_READY");
    expect(sandboxes.map((s) => s.metadata?.uid)).toEqual([hash]);
    expect((await c.n.ctd.cri.podSandboxStatus(sandboxes[0]!.id)).status?.network?.ip).toBe(m.status.podIP);
    const out = await kubectl("get", "pods", "-A", "-o", "wide");
    expect(out).toMatch(new RegExp(`kube-system\\s+${MIRROR}\\s+1/1\\s+Running\\s+0\\s+\\S+\\s+\\S+\\s+${c.n.node}`));
  }, 180_000);

  test("kubectl delete pod <mirror> → a new mirror (new UID); the static pod keeps running, not restarted", async () => {
    const before = (await mirror()).metadata.uid;
    const running = await containers();
    await kubectl("delete", "pod", "-n", "kube-system", MIRROR, "--wait=false");
    const m = await until(
      "mirror recreated",
      async () => {
        const o = await mirror();
        return o && o.metadata.uid !== before && !o.metadata.deletionTimestamp && o.status?.phase === "Running" ? o : undefined;
      },
      60_000,
      { intervalMs: 500 },
    );
    expect(m.metadata.annotations["kubernetes.io/config.mirror"]).toBeDefined();
    expect((await containers()).map((x: any) => x.id)).toEqual(running.map((x: any) => x.id));
  }, 120_000);

  test("a changed manifest → the mirror is replaced with the new hash", async () => {
    const old = await mirror();
    writeManifest("exec sleep 3601");
    const m = await until(
      "mirror replaced",
      async () => {
        const o = await mirror();
        const changed = o && o.metadata.annotations["kubernetes.io/config.mirror"] !== old.metadata.annotations["kubernetes.io/config.mirror"];
        return changed && o.metadata.uid !== old.metadata.uid ? o : undefined;
      },
      60_000,
      { intervalMs: 500 },
    );
    expect(m.metadata.annotations["kubernetes.io/config.mirror"]).toBe(m.metadata.annotations["kubernetes.io/config.hash"]);
    expect(m.spec.containers[0].command).toEqual(["sh", "-c", "exec sleep 3601"]);
  }, 120_000);

  test("events in the API: node (Starting, conditions) and the pod's (Pulled, Created, Started, Killing), shown by kubectl", async () => {
    await until("container events", async () => (await events()).some((e) => e.reason === "Killing" && e.involvedObject.name === MIRROR), 30_000, {
      intervalMs: 500,
    });
    const evs = await events();
    const nodeReasons = evs.filter((e) => e.involvedObject.kind === "Node").map((e) => e.reason);
    expect(nodeReasons).toEqual(expect.arrayContaining(["Starting", "NodeHasSufficientMemory", "NodeHasNoDiskPressure", "NodeHasSufficientPID"]));
    expect(evs.find((e) => e.reason === "Starting")).toMatchObject({
      type: "Normal",
      message: "Starting kubelet.",
      source: { component: "kubelet", host: c.n.node },
      involvedObject: { kind: "Node", name: c.n.node, uid: c.n.node },
      metadata: { namespace: "default" },
    });
    const pod = evs.filter((e) => e.involvedObject.name === MIRROR);
    expect(pod.map((e) => e.reason)).toEqual(expect.arrayContaining(["Pulled", "Created", "Started", "Killing"]));
    expect(pod.find((e) => e.reason === "Started")).toMatchObject({
      message: "Started container c",
      metadata: { namespace: "kube-system" },
      involvedObject: { kind: "Pod", namespace: "kube-system", fieldPath: "spec.containers{c}" },
    });
    expect(pod.find((e) => e.reason === "Pulled").message).toBe(`Container image "${image}" already present on machine`);
    expect(pod.find((e) => e.reason === "Killing").message).toBe("Stopping container c");
    const out = await kubectl("get", "events", "-A");
    expect(out).toMatch(/LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE/);
    expect(out).toMatch(new RegExp(`Normal\\s+Starting\\s+node/${c.n.node}\\s+Starting kubelet\\.`));
    expect(out).toMatch(new RegExp(`Normal\\s+Started\\s+pod/${MIRROR}\\s+Started container c`));
    const described = await kubectl("describe", "node", c.n.node);
    expect(described).toMatch(/Events:[\s\S]*Normal\s+Starting\s+\S+\s+kubelet\s+Starting kubelet\./);
  }, 60_000);

  test("a repeated event is one Event whose count grows (patched by the node), as kubectl describe pod shows", async () => {
    const probe = ', readinessProbe: { exec: { command: [sh, -c, "echo not yet; exit 1"] }, periodSeconds: 1 }';
    await c.cp.kubectlIn(sleeperPodYaml(c.n, "unready", "", probe), "apply", "-f", "-");
    const unhealthy = await until(
      "Unhealthy counted",
      async () => {
        const e = (await events()).filter((x) => x.reason === "Unhealthy" && x.involvedObject.name === "unready");
        return e.length === 1 && e[0].count >= 3 ? e[0] : undefined;
      },
      60_000,
      { intervalMs: 500 },
    );
    expect(unhealthy).toMatchObject({ type: "Warning", message: "Readiness probe failed: not yet", involvedObject: { fieldPath: "spec.containers{c}" } });
    const patches = c.audit!.events().filter((e) => e.verb === "patch" && e.objectRef?.resource === "events" && e.objectRef.name === unhealthy.metadata.name);
    expect(patches.length).toBeGreaterThanOrEqual(2);
    expect(patches.every((e) => e.user.username === `system:node:${c.n.node}`)).toBe(true);
    const described = await kubectl("describe", "pod", "unready");
    // kubectl 1.37 prefixes an event's message with the field it is about.
    expect(described).toMatch(/Warning\s+Unhealthy\s+\S+ \(x\d+ over \S+\)\s+kubelet\s+spec\.containers\{c\}: Readiness probe failed: not yet/);
    await kubectl("delete", "pod", "unready", "--timeout=60s");
  }, 120_000);

  test("kubectl cordon / uncordon → NodeNotSchedulable / NodeSchedulable", async () => {
    const seen = (reason: string) =>
      until(reason, async () => (await events()).find((e) => e.reason === reason && e.message === `Node ${c.n.node} status is now: ${reason}`), 15_000, {
        intervalMs: 500,
      });
    await kubectl("cordon", c.n.node);
    await seen("NodeNotSchedulable");
    await kubectl("uncordon", c.n.node);
    await seen("NodeSchedulable");
  }, 60_000);

  test("the manifest removed → the static pod stops and its mirror is deleted", async () => {
    rmSync(manifest);
    await until("mirror deleted", async () => (await mirror()) === undefined, 60_000, { intervalMs: 500 });
    await until("static pod stopped", async () => (await containers()).length === 0, 30_000, { intervalMs: 500 });
  }, 120_000);
});
