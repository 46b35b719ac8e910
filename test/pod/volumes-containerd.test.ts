// machine test: root and a private containerd (test/support/containerd.ts)
// Volumes on a real containerd: hostPath type errors keep the pod from starting (FailedMount with
// upstream's text), downwardAPI files and env valueFrom carry the pod's fields, a subPath through a
// symlink out of its volume is refused while a normal subPath works. Skipped when not root.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createKubeRuntime } from "../../src/pod/kuberuntime/manager.ts";
import { createPodLifecycle } from "../../src/pod/lifecycle.ts";
import type { PodLifecycle } from "../../src/pod/lifecycle-types.ts";
import type { Runtime } from "../../src/pod/runtime.ts";
import type { PodStatus } from "../../src/pod/types.ts";
import { acquireContainerd, canRunContainerd, removeNodePods, tearDownPods, type TestContainerd, testRuntimeCriName } from "../support/containerd.ts";
import { until } from "../support/wait.ts";

const PID = process.pid;
const BASE = `/tmp/bunlet-vols-${PID}`;
const MANIFESTS = join(BASE, "manifests");
const OUT = join(BASE, "out");
const NODE = "volnode";
const IMAGE = "bunlet.local/busybox:1";
const out = { name: "out", mountPath: "/out" };

const podJson = (name: string, spec: Record<string, unknown>, labels?: Record<string, string>) =>
  JSON.stringify({ apiVersion: "v1", kind: "Pod", metadata: { name, labels }, spec: { hostNetwork: true, terminationGracePeriodSeconds: 1, ...spec } });

describe.skipIf(!canRunContainerd())("volumes on containerd", () => {
  let ctd: TestContainerd;
  let rt: Runtime;
  let lc: PodLifecycle;
  const events: { reason: string; message: string }[] = [];
  const status = (name: string): PodStatus | undefined => lc.listPodsForApi().find((p) => p.metadata.name === `${name}-${NODE}`)?.status;

  beforeAll(async () => {
    ctd = await acquireContainerd();
    mkdirSync(MANIFESTS, { recursive: true });
    mkdirSync(OUT, { recursive: true });
    rt = createKubeRuntime({
      cri: ctd.cri,
      podLogsDir: join(BASE, "logs"),
      rootDir: join(BASE, "root"),
      hostIP: "127.0.0.1",
      events: { event: (_ref, _type, reason, message) => events.push({ reason, message }) },
    });
    lc = createPodLifecycle({
      runtime: rt,
      config: { nodeName: NODE, hostIP: "127.0.0.1", staticPodPath: MANIFESTS, fileCheckFrequencyMs: 500, syncFrequencyMs: 60_000, errorRetryMs: 1_000 },
    });
    await lc.start();
  }, 600_000);

  afterAll(async () => {
    await lc?.stop();
    await tearDownPods(ctd, () => removeNodePods(rt, NODE), `/bunlet-vols-unused-${PID}`, BASE);
  }, 120_000);

  test("hostPath type mismatch: no container starts, FailedMount with upstream's message; DirectoryOrCreate creates", async () => {
    const file = join(BASE, "plain-file");
    writeFileSync(file, "x");
    const created = join(BASE, "created-dir");
    writeFileSync(
      join(MANIFESTS, "hp.json"),
      podJson("hp", {
        volumes: [
          { name: "mk", hostPath: { path: created, type: "DirectoryOrCreate" } },
          { name: "bad", hostPath: { path: file, type: "Directory" } },
        ],
        containers: [{ name: "main", image: IMAGE, command: ["sleep", "3600"], volumeMounts: [{ name: "bad", mountPath: "/bad" }] }],
      }),
    );
    const message = `MountVolume.SetUp failed for volume "bad" : hostPath type check failed: ${file} is not a directory`;
    await until("FailedMount", () => events.some((e) => e.reason === "FailedMount" && e.message === message));
    // As upstream: the container waits in ContainerCreating, with no message (the event says why).
    expect(status("hp")!.containerStatuses![0]!.state.waiting).toEqual({ reason: "ContainerCreating" });
    expect(existsSync(created)).toBe(true);
    expect(status("hp")!.phase).toBe("Pending");
    expect((await rt.getPods(true)).some((p) => p.name === `hp-${NODE}`)).toBe(false); // not even a sandbox
    unlinkSync(join(MANIFESTS, "hp.json"));
  }, 60_000);

  test("downwardAPI volume files and env valueFrom carry the pod's fields", async () => {
    const script =
      'cat /podinfo/labels > /out/labels; cat /podinfo/name > /out/name; cat /podinfo/mem > /out/mem; touch /podinfo/x 2>/dev/null && echo writable > /out/ro || echo read-only > /out/ro; echo "$MY_IP $MY_NS $CPU" > /out/env; exec sleep 3600';
    writeFileSync(
      join(MANIFESTS, "dapi.json"),
      podJson(
        "dapi",
        {
          volumes: [
            { name: "out", hostPath: { path: OUT, type: "Directory" } },
            {
              name: "podinfo",
              downwardAPI: {
                items: [
                  { path: "labels", fieldRef: { fieldPath: "metadata.labels" } },
                  { path: "mem", resourceFieldRef: { containerName: "main", resource: "limits.memory", divisor: "1Mi" } },
                ],
              },
            },
            { name: "proj", projected: { sources: [{ downwardAPI: { items: [{ path: "name", fieldRef: { fieldPath: "metadata.name" } }] } }] } },
          ],
          containers: [
            {
              name: "main",
              image: IMAGE,
              command: ["sh", "-c", script.replace("/podinfo/name", "/proj/name")],
              resources: { limits: { memory: "64Mi", cpu: "250m" } },
              env: [
                { name: "MY_IP", valueFrom: { fieldRef: { fieldPath: "status.podIP" } } },
                { name: "MY_NS", valueFrom: { fieldRef: { fieldPath: "metadata.namespace" } } },
                { name: "CPU", valueFrom: { resourceFieldRef: { resource: "limits.cpu", divisor: "1m" } } },
              ],
              volumeMounts: [out, { name: "podinfo", mountPath: "/podinfo" }, { name: "proj", mountPath: "/proj" }],
            },
          ],
        },
        { app: "web", tier: "front" },
      ),
    );
    await until("env written", () => (existsSync(join(OUT, "env")) && readFileSync(join(OUT, "env"), "utf8").trim() !== "") || undefined);
    expect(readFileSync(join(OUT, "labels"), "utf8")).toBe('app="web"\ntier="front"');
    expect(readFileSync(join(OUT, "name"), "utf8")).toBe(`dapi-${NODE}`);
    expect(readFileSync(join(OUT, "mem"), "utf8")).toBe("64");
    expect(readFileSync(join(OUT, "env"), "utf8").trim()).toBe("127.0.0.1 default 250");
    expect(readFileSync(join(OUT, "ro"), "utf8").trim()).toBe("read-only"); // downwardAPI volumes are always read-only
    unlinkSync(join(MANIFESTS, "dapi.json"));
  }, 60_000);

  test("a subPath through a symlink out of the volume is refused; a plain subPath works", async () => {
    const vol = join(BASE, "shared-vol");
    mkdirSync(join(vol, "ok"), { recursive: true });
    symlinkSync("/etc", join(vol, "escape"));
    const container = (name: string, sub: string) => ({
      name,
      image: IMAGE,
      command: ["sh", "-c", `ls /m > /out/${name}.ls; exec sleep 3600`],
      volumeMounts: [out, { name: "v", mountPath: "/m", subPath: sub }],
    });
    writeFileSync(
      join(MANIFESTS, "sub.json"),
      podJson("sub", {
        volumes: [
          { name: "out", hostPath: { path: OUT } },
          { name: "v", hostPath: { path: vol } },
        ],
        containers: [container("good", "ok"), container("evil", "escape")],
      }),
    );
    const evil = await until("evil refused", () => {
      const c = status("sub")?.containerStatuses?.find((x) => x.name === "evil");
      return c?.state.waiting?.reason === "CreateContainerConfigError" ? c : undefined;
    });
    expect(evil.state.waiting!.message).toBe('failed to prepare subPath for volumeMount "v" of container "evil"');
    await until("good ran", () => existsSync(join(OUT, "good.ls")) || undefined);
    expect(existsSync(join(OUT, "evil.ls"))).toBe(false);
    unlinkSync(join(MANIFESTS, "sub.json"));
  }, 60_000);

  test("mountPropagation HostToContainer: rslave in the OCI spec, and a mount made on the host later shows up inside", async () => {
    // This host's / is a private mount; propagation needs a shared source, so the test makes one.
    const prop = join(BASE, "prop");
    mkdirSync(prop, { recursive: true });
    const sh = (...a: string[]) => spawnSync(a[0]!, a.slice(1), { encoding: "utf8" });
    expect(sh("mount", "-t", "tmpfs", "tmpfs", prop).status).toBe(0);
    try {
      expect(sh("mount", "--make-rshared", prop).status).toBe(0);
      writeFileSync(
        join(MANIFESTS, "prop.json"),
        podJson("prop", {
          volumes: [{ name: "p", hostPath: { path: prop, type: "Directory" } }],
          containers: [
            { name: "main", image: IMAGE, command: ["sleep", "3600"], volumeMounts: [{ name: "p", mountPath: "/p", mountPropagation: "HostToContainer" }] },
          ],
        }),
      );
      const id = await until(
        "running",
        () =>
          status("prop")?.containerStatuses?.[0]?.state.running && status("prop")!.containerStatuses![0]!.containerID!.replace(`${testRuntimeCriName}://`, ""),
      );
      const info = (await ctd.cri.containerStatus(id, true)).info?.info ?? "{}";
      const mount = (JSON.parse(info).runtimeSpec?.mounts ?? []).find((m: { destination: string }) => m.destination === "/p");
      expect(mount.options).toContain("rslave");
      mkdirSync(join(prop, "late"));
      expect(sh("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", join(prop, "late")).status).toBe(0);
      writeFileSync(join(prop, "late", "hello"), "from the host");
      const r = await rt.execSync!(id, ["cat", "/p/late/hello"], 5_000);
      expect(r.stdout).toBe("from the host");
      unlinkSync(join(MANIFESTS, "prop.json"));
      await until("pod gone", () => !status("prop") || undefined, 60_000);
    } finally {
      sh("umount", "-R", prop);
    }
  }, 90_000);
});
