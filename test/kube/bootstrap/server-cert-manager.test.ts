// The serving-certificate manager's loop with a fake clock and a client that always fails: no
// request before the node has an address (upstream's nil template), then upstream's back-off
// between failed attempts — 2 s doubling to 32 s, then every 32 s — each one a renew error.
import { afterEach, expect, test } from "bun:test";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createServerCertManager, type ServerCertManager } from "../../../src/kube/bootstrap/index.ts";
import type { KubeClient } from "../../../src/kube/client.ts";
import { createManualClock } from "../../../src/manual-clock.ts";
import { until } from "../../support/wait.ts";

let manager: ServerCertManager | undefined;
let dir: string | undefined;
afterEach(async () => {
  manager?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

function failingClient(): KubeClient & { posts: { path: string; body: any }[] } {
  const posts: { path: string; body: any }[] = [];
  return {
    posts,
    config: {} as KubeClient["config"],
    async request(o) {
      posts.push({ path: o.path, body: o.body });
      throw new Error("connection refused");
    },
    stream: () => Promise.reject(new Error("connection refused")),
    setClientCertificate() {},
  };
}

test("no request without an address; failures back off 2, 4, 8, 16, 32, 32 s, each a renew error", async () => {
  dir = await mkdtemp(join(tmpdir(), "server-cert-manager-"));
  const clock = createManualClock(1_000_000);
  const client = failingClient();
  let addresses: { type: string; address: string }[] = [{ type: "Hostname", address: "n1" }];
  const errors: string[] = [];
  manager = createServerCertManager({ certDir: dir, nodeName: "n1", clock, addresses: () => addresses, onRenewError: (e) => errors.push(e.message) });
  await manager.load();
  manager.start(client);
  for (let i = 0; i < 5; i++) clock.advance(1000);
  expect(client.posts).toHaveLength(0);

  addresses = [
    { type: "Hostname", address: "n1" },
    { type: "InternalIP", address: "10.0.0.5" },
  ];
  clock.advance(1000);
  await until("first attempt", () => errors.length === 1);
  expect(client.posts[0]!.body).toMatchObject({
    metadata: { generateName: "csr-" },
    spec: { signerName: "kubernetes.io/kubelet-serving", usages: ["digital signature", "server auth"] },
  });
  expect(errors[0]).toBe("connection refused");

  for (const [i, waitMs] of [2000, 4000, 8000, 16_000, 32_000, 32_000].entries()) {
    clock.advance(waitMs - 1);
    await Bun.sleep(0);
    expect(errors).toHaveLength(i + 1);
    clock.advance(1);
    await until(`attempt ${i + 2}`, () => errors.length === i + 2);
  }
  expect(manager.current()).toBeUndefined();
});
