// Pod start slots (docs/adr/0011-pod-start-slots.md): a pod keeps the slot of its RunPodSandbox for its first container's
// CreateContainer and StartContainer, so pods finish one after another; a pull never holds a slot.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CriClient } from "../../../src/cri/client.ts";
import { createKubeRuntime } from "../../../src/pod/kuberuntime/index.ts";

const dir = mkdtempSync(join(tmpdir(), "bunlet-start-slots-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A CRI whose heavy calls take a few turns and are recorded with the pod they are for; images present unless `pulled`. */
function recordingCri(pulled = new Set<string>()) {
  const calls: string[] = [];
  const slow = async <T>(what: string, v: T) => {
    calls.push(`${what}>`);
    for (let i = 0; i < 5; i++) await Bun.sleep(1);
    calls.push(`${what}<`);
    return v;
  };
  const pulledNow = new Set<string>();
  const impl: Record<string, (...a: any[]) => unknown> = {
    imageStatus: async (image: string) => (pulled.has(image) && !pulledNow.has(image) ? null : { id: `sha256:${image}` }),
    pullImage: async (image: string) => {
      pulledNow.add(image);
      return slow(`pull ${image}`, `sha256:${image}`);
    },
    runPodSandbox: (cfg: { metadata: { name: string } }) => slow(`sandbox ${cfg.metadata.name}`, `sb-${cfg.metadata.name}`),
    createContainer: (sb: string) => slow(`create ${sb.slice(3)}`, `c-${sb.slice(3)}`),
    startContainer: (id: string) => slow(`start ${id.slice(2)}`, undefined),
    podSandboxStatus: async () => ({ status: { network: { ip: "10.0.0.9" } } }),
    listContainers: async () => (calls.push("list containers"), []),
    listPodSandbox: async () => (calls.push("list sandboxes"), []),
  };
  const cri = new Proxy({}, { get: (_t, k: string) => impl[k] ?? (async () => undefined) }) as unknown as CriClient;
  return { cri, calls };
}

const pod = (name: string, image = "bunlet.local/busybox:1") => ({
  metadata: { name, namespace: "ns", uid: `u-${name}` },
  spec: { containers: [{ name: "main", image, imagePullPolicy: "IfNotPresent" }] },
});
const empty = (name: string) => ({ uid: `u-${name}`, name, namespace: "ns", sandboxes: [], containers: [] });
const backOff = { isInBackOff: () => false, next: () => {} };

test("with one slot, each pod's sandbox, create and start run back to back before the next pod's sandbox; a new pod lists nothing to kill", async () => {
  const { cri, calls } = recordingCri();
  const rt = createKubeRuntime({ cri, podLogsDir: dir, rootDir: dir, volumeHostPath: () => undefined, concurrentStartCalls: 1, manageEtcHosts: false });
  const results = await Promise.all(["a", "b"].map((n) => rt.syncPod(pod(n), empty(n), backOff)));
  expect(results.map((r) => r.errors)).toEqual([[], []]);
  expect(calls).toEqual([
    "sandbox a>",
    "sandbox a<",
    "create a>",
    "create a<",
    "start a>",
    "start a<",
    "sandbox b>",
    "sandbox b<",
    "create b>",
    "create b<",
    "start b>",
    "start b<",
  ]);
});

test("a pod that must pull its image gives its slot up for the pull; the next pod's sandbox runs meanwhile", async () => {
  const { cri, calls } = recordingCri(new Set(["registry.example/app:1"]));
  const rt = createKubeRuntime({ cri, podLogsDir: dir, rootDir: dir, volumeHostPath: () => undefined, concurrentStartCalls: 1, manageEtcHosts: false });
  const results = await Promise.all([rt.syncPod(pod("a", "registry.example/app:1"), empty("a"), backOff), rt.syncPod(pod("b"), empty("b"), backOff)]);
  expect(results.map((r) => r.errors)).toEqual([[], []]);
  // b's sandbox takes the slot a gave up, while a pulls.
  expect(calls.indexOf("sandbox b>")).toBeLessThan(calls.indexOf("pull registry.example/app:1<"));
  expect(calls.filter((c) => c.startsWith("start"))).toHaveLength(4);
});
