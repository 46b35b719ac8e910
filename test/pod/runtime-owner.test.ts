// Two agents on one containerd must not kill each other's pods as orphans. Sandboxes
// and containers carry io.bunlet.owner=<root dir>; an agent sees only its own pods (and those of
// owners no longer running); a second live agent is refused at start with a clear error.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CriClient } from "../../src/cri/client.ts";
import type { Container, PodSandbox } from "../../src/cri/types.ts";
import { CONTAINER_NAME_LABEL, newPodLabels } from "../../src/pod/kuberuntime/labels.ts";
import { checkRuntimeOwner, holdOwnerLock, OWNER_LABEL, ownedCri, ownerAlive, RuntimeOwnerError } from "../../src/pod/kuberuntime/owner.ts";
import { createKubeRuntime } from "../../src/pod/kuberuntime/manager.ts";
import { createPodLifecycle } from "../../src/pod/lifecycle.ts";
import { createSettlingClock } from "../support/settling-clock.ts";
import { createFakeRuntime } from "./fake-runtime.ts";

const dir = mkdtempSync(join(tmpdir(), "bunlet-owner-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const sandbox = (id: string, name: string, owner?: string, state = "SANDBOX_READY") =>
  ({
    id,
    state,
    createdAt: 1,
    metadata: { name, namespace: "default", uid: `uid-${name}`, attempt: 0 },
    labels: {
      ...newPodLabels({ name, namespace: "default", uid: `uid-${name}` }),
      ...(owner ? { [OWNER_LABEL]: owner } : {}),
    },
    annotations: {},
  }) as unknown as PodSandbox;

function fakeCri(sandboxes: PodSandbox[]) {
  const created: Record<string, string>[] = [];
  const cri = {
    endpoint: "unix:///run/containerd/containerd.sock",
    listPodSandbox: async () => sandboxes,
    listContainers: async () =>
      sandboxes.map(
        (s) =>
          ({
            id: `c-${s.id}`,
            podSandboxId: s.id,
            state: "CONTAINER_RUNNING",
            labels: { ...s.labels, [CONTAINER_NAME_LABEL]: "app" },
            metadata: { name: "app", attempt: 0 },
          }) as unknown as Container,
      ),
    runPodSandbox: async (config: { labels?: Record<string, string> }) => (created.push(config.labels ?? {}), "new"),
    createContainer: async (_id: string, config: { labels?: Record<string, string> }) => (created.push(config.labels ?? {}), "newc"),
  } as unknown as CriClient;
  return { cri, created };
}

describe("runtime owner", () => {
  const me = join(dir, "a");
  const other = join(dir, "b");
  const gone = join(dir, "gone");

  test("the owner lock: held while the agent runs, free once released", () => {
    const lock = holdOwnerLock(other)!;
    expect(ownerAlive(other)).toBe(true);
    expect(ownerAlive(gone)).toBe(false);
    expect(holdOwnerLock(other)).toBeUndefined(); // a second agent with the same root dir
    lock.release();
    expect(ownerAlive(other)).toBe(false);
  });

  test("an agent sees its own pods, unlabeled ones and those of stopped owners; never a live owner's", async () => {
    const lock = holdOwnerLock(other)!;
    try {
      const { cri, created } = fakeCri([sandbox("s1", "mine", me), sandbox("s2", "theirs", other), sandbox("s3", "legacy"), sandbox("s4", "abandoned", gone)]);
      const owned = ownedCri(cri, me);
      expect((await owned.listPodSandbox()).map((s) => s.metadata!.name)).toEqual(["mine", "legacy", "abandoned"]);
      expect((await owned.listContainers()).map((c) => c.id)).toEqual(["c-s1", "c-s3", "c-s4"]);
      // Through the kuberuntime, as PLEG and housekeeping see it: the live owner's pod is not there,
      // so it is never killed as an orphan.
      const rt = createKubeRuntime({ cri: owned });
      expect((await rt.getPods(true)).map((p) => p.name).sort()).toEqual(["abandoned", "legacy", "mine"]);
      expect([...rt.foreignPodUids!()]).toEqual(["uid-theirs"]);
      await owned.runPodSandbox({ labels: { x: "1" } } as never);
      await owned.createContainer("new", { labels: { y: "2" } } as never, {} as never);
      expect(created).toEqual([
        { x: "1", [OWNER_LABEL]: me },
        { y: "2", [OWNER_LABEL]: me },
      ]);
    } finally {
      lock.release();
    }
  });

  test("a second live agent is refused at start with an error naming the other owner and a pod", async () => {
    const lock = holdOwnerLock(other)!;
    try {
      const { cri } = fakeCri([sandbox("s2", "theirs", other), sandbox("s1", "mine", me)]);
      const err = await checkRuntimeOwner(cri, me).catch((e: Error) => e);
      expect(err).toBeInstanceOf(RuntimeOwnerError);
      expect((err as Error).message).toBe(
        `container runtime unix:///run/containerd/containerd.sock already runs 1 pod(s) of another bunlet (root dir ${other}; e.g. default/theirs); this one (root dir ${me}) refuses to start: two agents on one runtime would kill each other's pods as orphans. Give each agent its own containerd (or stop the other one and remove its pods: crictl rmp -f <id>)`,
      );
    } finally {
      lock.release();
    }
    // The other agent stopped: its pods are orphans again, no refusal.
    await checkRuntimeOwner(fakeCri([sandbox("s2", "theirs", other)]).cri, me);
    await checkRuntimeOwner(fakeCri([sandbox("s5", "stopped", other, "SANDBOX_NOTREADY")]).cri, me);
  });
});

test("housekeeping leaves the pod cgroups of another live agent's pods (same cgroupRoot) alone", async () => {
  const clock = createSettlingClock();
  const rt = createFakeRuntime(clock.now);
  rt.foreignPodUids = () => new Set(["uid-theirs"]);
  const removed: string[] = [];
  const cgroups = {
    ensurePod: async () => undefined,
    removePod: async (uid: string) => void removed.push(uid),
    listPodUids: async () => ["uid-theirs", "uid-orphan"],
  };
  const lc = createPodLifecycle({ runtime: rt, clock, cgroups, config: { nodeName: "n1", hostIP: "192.168.1.10" } });
  await lc.start();
  lc.handleUpdate({ op: "SET", pods: [], source: "file" });
  await lc.housekeeping();
  await lc.stop();
  expect(removed).toEqual(["uid-orphan"]);
});
