import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createAutonomyStore } from "../../../src/pod/autonomy/index.ts";
import { createManualClock } from "../../../src/manual-clock.ts";

const pod = (uid: string, secret = "sec") => ({
  metadata: { name: `p-${uid}`, namespace: "ns", uid },
  spec: { containers: [{ name: "c", image: "i" }], volumes: [{ name: "v", secret: { secretName: secret } }] },
});
const secret = { metadata: { name: "sec", namespace: "ns" }, data: { k: "dg==" } };

let dir: string;
afterEach(() => rmSync(dir, { recursive: true, force: true }));
const open = (opts: { maxBytes?: number; secrets?: boolean } = {}) =>
  createAutonomyStore({ dir: join(dir, "autonomy"), maxBytes: opts.maxBytes ?? 1 << 20, secrets: opts.secrets ?? true, clock: createManualClock(1000) });
const TOKEN = { namespace: "ns", podUid: "u1", key: "\n3600", token: "t", expirationMs: 5000 };

/** A fresh directory and a loaded store holding pod u1, its secret and (unless `token` is false) a token. */
async function storeWithPod(token = true) {
  dir = mkdtempSync(join(tmpdir(), "autonomy-"));
  const a = open();
  await a.load();
  a.putPods([pod("u1")]);
  a.putObject("Secret", "ns", "sec", secret);
  if (token) a.putToken(TOKEN);
  return a;
}

describe("autonomy store", () => {
  test("what is stored is read back after a restart, private to root", async () => {
    const a = await storeWithPod();
    await a.flush();
    expect(statSync(a.dir).mode & 0o777).toBe(0o700);
    for (const f of readdirSync(a.dir)) expect(statSync(join(a.dir, f)).mode & 0o777).toBe(0o600);

    const b = open();
    await b.load();
    expect(b.pods()).toEqual([pod("u1")]);
    expect(b.object("Secret", "ns", "sec")).toEqual(secret);
    expect(b.token("u1", "\n3600")?.token).toBe("t");
  });

  test("a pod gone from the API server goes with its secret and tokens", async () => {
    const a = await storeWithPod();
    a.putPods([]);
    await a.flush();
    expect(readdirSync(a.dir)).toEqual([]);
    expect(a.usedBytes()).toBe(0);
  });

  test("a corrupt or foreign file is skipped, the rest loads", async () => {
    dir = mkdtempSync(join(tmpdir(), "autonomy-"));
    const a = open();
    await a.load();
    a.putPods([pod("u1"), pod("u2")]);
    await a.flush();
    writeFileSync(join(a.dir, "pod_u2.json"), "{ not json");
    writeFileSync(join(a.dir, "notes.txt"), "hello");
    writeFileSync(join(a.dir, "pod_u3.json"), JSON.stringify({ version: 1, kind: "Pod", savedAt: "", object: { metadata: {} } }));
    const b = open();
    await b.load();
    expect(b.pods()).toEqual([pod("u1")]);
  });

  test("a write past the bound is not made; the cache stays within it", async () => {
    dir = mkdtempSync(join(tmpdir(), "autonomy-"));
    const a = open({ maxBytes: 400 });
    await a.load();
    a.putPods([pod("u1"), pod("u2"), pod("u3")]);
    await a.flush();
    expect(a.usedBytes()).toBeLessThanOrEqual(400);
    expect(a.pods().length).toBeLessThan(3);
  });

  test("with secrets off, none is written and stored ones are removed at load", async () => {
    const a = await storeWithPod(false);
    await a.flush();
    const b = open({ secrets: false });
    await b.load();
    expect(b.object("Secret", "ns", "sec")).toBeUndefined();
    expect(readdirSync(b.dir)).toEqual(["pod_u1.json"]);
    b.putObject("Secret", "ns", "sec", secret);
    b.putToken(TOKEN);
    await b.flush();
    expect(readdirSync(b.dir)).toEqual(["pod_u1.json"]);
  });
});
