// imagePullSecrets → CRI AuthConfig (upstream kuberuntime PullImage with the pod's keyring): the
// credentials matching the image are tried in order until a pull succeeds; an unreadable pull secret
// is skipped; an image no credential matches is pulled anonymously. A recording CRI stands in.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CriClient } from "../../src/cri/client.ts";
import { createKubeRuntime } from "../../src/pod/kuberuntime/index.ts";
import { ObjectNotFoundError, type PodApiObjects } from "../../src/pod/volumes/index.ts";

const dir = mkdtempSync(join(tmpdir(), "bunlet-pull-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const b64 = (s: string) => Buffer.from(s).toString("base64");
const dockerconfig = (registry: string, user: string) => ({
  data: { ".dockerconfigjson": b64(JSON.stringify({ auths: { [registry]: { auth: b64(`${user}:pw-${user}`) } } })) },
  type: "kubernetes.io/dockerconfigjson",
});

function recordingCri() {
  const pulls: { image: string; user?: string }[] = [];
  const impl: Record<string, (...a: any[]) => unknown> = {
    imageStatus: async () => undefined,
    pullImage: async (image: string, auth?: { username?: string }) => {
      pulls.push({ image, user: auth?.username });
      if (auth?.username === "stale") throw new Error("401 Unauthorized");
      return "sha256:abc";
    },
    runPodSandbox: async () => "sandbox-1",
    createContainer: async () => "container-1",
    podSandboxStatus: async () => ({ status: { network: { ip: "10.0.0.9" } } }),
    listContainers: async () => [],
    listPodSandbox: async () => [],
  };
  const cri = new Proxy({}, { get: (_t, k: string) => impl[k] ?? (async () => undefined) }) as unknown as CriClient;
  return { cri, pulls };
}

test("pull secrets: matching credentials in order until one works; anonymous when none match", async () => {
  const { cri, pulls } = recordingCri();
  const objects: PodApiObjects = {
    namespace: "ns",
    secrets: new Map<string, any>([
      ["old", dockerconfig("registry.example.com", "stale")],
      ["new", dockerconfig("registry.example.com", "fresh")],
      ["gone", new ObjectNotFoundError("secret", "gone")],
    ]),
    configMaps: new Map(),
    tokens: new Map(),
  };
  const rt = createKubeRuntime({
    cri,
    podLogsDir: dir,
    rootDir: dir,
    volumeHostPath: () => undefined,
    apiObjects: { resolve: async () => objects, forget: () => {} },
  });
  const pod = {
    metadata: { name: "p", namespace: "ns", uid: "u1" },
    spec: {
      imagePullSecrets: [{ name: "gone" }, { name: "old" }, { name: "new" }],
      containers: [
        { name: "a", image: "registry.example.com/team/app:1", imagePullPolicy: "IfNotPresent" },
        { name: "b", image: "quay.io/x/y:2" },
      ],
    },
  };
  const backOff = { isInBackOff: () => false, next: () => {} };
  const r = await rt.syncPod(pod, { uid: "u1", name: "p", namespace: "ns", sandboxes: [], containers: [] }, backOff);
  expect(r.errors).toEqual([]);
  expect(pulls).toEqual([
    { image: "registry.example.com/team/app:1", user: "stale" },
    { image: "registry.example.com/team/app:1", user: "fresh" },
    { image: "quay.io/x/y:2", user: undefined },
  ]);
});
