// The compiled bunlet runs examples/manifests/sidecar-hooks.yaml on the private containerd: the init
// container, the sidecar (started, gating the app), the postStart hook and the downward API all work
// through the composition root; /pods reports it; removing the manifest stops it.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, mkdirSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import type { Pod } from "../../src/pod/types.ts";
import { ensureBuilt, freePort, killAll, pollUntil, ROOT, spawnBunlet, waitForHealthz, type BunletProcess } from "../support/binary.ts";
import { staticPodFlags } from "../support/agent.ts";
import { acquireContainerd, canRunContainerd, removeSandboxes, tearDownPods, type TestContainerd } from "../support/containerd.ts";

const PID = process.pid;

beforeAll(async () => {
  await ensureBuilt();
}, 180_000);
afterAll(killAll);

describe.skipIf(!canRunContainerd())("lifecycle features through the binary", () => {
  let ctd: TestContainerd;
  const base = `/tmp/bunlet-e2e-lc-${PID}`;
  const manifests = join(base, "manifests");
  const cgroupRoot = `/bunlet-e2e-lc-${PID}`;
  const node = `e2elc-${PID}`;
  let p: BunletProcess | undefined;
  let port = 0;
  const pod = async (): Promise<Pod | undefined> =>
    ((await (await fetch(`http://127.0.0.1:${port}/pods`)).json()) as { items: Pod[] }).items.find((x) => x.metadata.name === `shop-${node}`);

  beforeAll(async () => {
    ctd = await acquireContainerd();
    mkdirSync(manifests, { recursive: true });
    port = freePort();
  }, 600_000);

  afterAll(async () => {
    await p?.stop("SIGTERM", 5000);
    await tearDownPods(ctd, () => removeSandboxes(ctd.cri, node), cgroupRoot, base);
  }, 120_000);

  test("the sidecar/hooks example reaches Ready and stops when its manifest goes", async () => {
    copyFileSync(join(ROOT, "examples/manifests/sidecar-hooks.yaml"), join(manifests, "shop.yaml"));
    p = spawnBunlet([
      ...staticPodFlags({ rootDir: join(base, "root"), manifests, cgroupRoot, endpoint: ctd.endpoint, node, port }),
      "--file-check-frequency=1s",
    ]);
    await waitForHealthz(p, `http://127.0.0.1:${port}/healthz`);
    await pollUntil(async () => (await pod())?.status?.conditions?.find((c) => c.type === "Ready")?.status === "True", "shop Ready", 90_000, 200);
    const s = (await pod())!.status!;
    expect(s.phase).toBe("Running");
    expect(s.initContainerStatuses!.find((c) => c.name === "prepare")!.state.terminated?.exitCode).toBe(0);
    expect(s.initContainerStatuses!.find((c) => c.name === "shipper")).toMatchObject({ started: true, ready: true });
    unlinkSync(join(manifests, "shop.yaml"));
    await pollUntil(async () => (await ctd.cri.listPodSandbox()).every((x) => x.metadata?.name !== `shop-${node}`), "shop removed", 60_000, 200);
    expect(await p.stop("SIGTERM", 5000)).toBe(0);
    p = undefined;
  }, 180_000);
});
