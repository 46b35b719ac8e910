// Pod security proof: ≥ 1,000 generated hostile API objects, each through the entry point that meets it
// in the agent — the API pod source and the config mux (forged config.source, path-like UIDs), the
// configMap/secret volume writer (payload paths), the subPath check (escaping and symlinked sub paths),
// probes and hooks (endless bodies) — each gets its refusal, and the bystanders (good API pods, a file
// pod, a good volume, the directory around the volumes) are untouched.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { admitPod } from "../../src/eviction/admission.ts";
import { exemptFromEviction } from "../../src/eviction/policy.ts";
import type { KubeClient } from "../../src/kube/index.ts";
import { runLifecycleHandler } from "../../src/pod/lifecycle-hooks.ts";
import { isCriticalPod, isStaticPod } from "../../src/pod/pod-like.ts";
import { runProbe } from "../../src/pod/prober/probes.ts";
import { MAX_RESP_BODY_LENGTH } from "../../src/pod/read-at-most.ts";
import { createApiSource } from "../../src/pod/sources/api.ts";
import { createPodConfig } from "../../src/pod/sources/config-mux.ts";
import type { PodUpdate } from "../../src/pod/sources/update.ts";
import { ConfigSourceAnnotationKey } from "../../src/pod/static-pod.ts";
import type { Pod, Probe } from "../../src/pod/types.ts";
import { prepareSubPath, setUpPodVolume, subPathError, type PodApiObjects } from "../../src/pod/volumes/index.ts";
import { FORGED_SOURCES, hostileRelativePath, hostileUid } from "../support/hostile.ts";
import { seededRand } from "../support/rand.ts";
import { createSettlingClock } from "../support/settling-clock.ts";
import { makePod } from "./fake-runtime.ts";

const base = mkdtempSync(join(tmpdir(), `bunlet-hostile-api-${process.pid}-`));
afterAll(() => rmSync(base, { recursive: true, force: true }));
const r = seededRand(0x9e3779b9);
let generated = 0;
const ALLOCATABLE = { cpuMilli: 1000, memoryBytes: 2 ** 30 };

const apiPod = (name: string, uid: string, annotations?: Record<string, string>) => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name, namespace: "tenant", uid, resourceVersion: "1", ...(annotations ? { annotations } : {}) },
  spec: { nodeName: "n", containers: [{ name: "app", image: "i" }] },
});

/** The API source over a fake client whose list returns `items` and whose watch never sends. */
async function throughApiSource(items: unknown[]): Promise<Pod[]> {
  const out: PodUpdate[] = [];
  const mux = createPodConfig({ clock: createSettlingClock(), onUpdate: (u) => out.push(u) });
  const client = {
    request: async () => ({ metadata: { resourceVersion: "1" }, items }),
    stream: async (o: { signal?: AbortSignal }) => new Response(new ReadableStream({ start: (c) => o.signal?.addEventListener("abort", () => c.close()) })),
  } as unknown as KubeClient;
  const src = createApiSource({ client, nodeName: "n", clock: createSettlingClock(), onUpdate: (u) => mux.merge(u.source, u) });
  src.start();
  for (let i = 0; i < 100 && out.length === 0; i++) await Bun.sleep(5);
  src.stop();
  return mux.pods();
}

describe("hostile API objects (generated)", () => {
  test("400 pods with forged config.source or a path for a UID: stamped api or dropped; the good pods as sent", async () => {
    const items: unknown[] = [];
    const forged = new Set<string>();
    const badUid = new Set<string>();
    for (let i = 0; i < 200; i++, generated++) {
      const uid = `forged-${i}`;
      forged.add(uid);
      items.push(
        apiPod(`forged-${i}`, uid, {
          [ConfigSourceAnnotationKey]: r.pick(FORGED_SOURCES),
          "kubernetes.io/config.hash": `h${r.int(1e9)}`,
          "kubernetes.io/config.seen": "2000-01-01T00:00:00Z",
        }),
      );
    }
    for (let i = 0; i < 200; i++, generated++) {
      const uid = hostileUid(r);
      badUid.add(uid);
      items.push(apiPod(`baduid-${i}`, uid));
    }
    for (let i = 0; i < 5; i++) items.push(apiPod(`good-${i}`, `good-${i}`, { team: "a" }));
    const pods = await throughApiSource(items);
    const byUid = new Map(pods.map((p) => [p.metadata.uid, p]));
    for (const uid of badUid) expect(byUid.has(uid)).toBe(false);
    for (const uid of forged) {
      const p = byUid.get(uid)!;
      expect(p.metadata.annotations?.[ConfigSourceAnnotationKey]).toBe("api");
      expect(p.metadata.annotations?.["kubernetes.io/config.seen"]).not.toBe("2000-01-01T00:00:00Z");
      expect([isStaticPod(p), isCriticalPod(p), exemptFromEviction(p, false), admitPod(p, ["MemoryPressure"]).admit]).toEqual([false, false, false, false]);
    }
    for (let i = 0; i < 5; i++) {
      const p = byUid.get(`good-${i}`)!;
      expect(p.metadata.annotations?.team).toBe("a");
      expect(p.spec.containers.map((c) => c.image)).toEqual(["i"]);
    }
    expect(pods.length).toBe(205);
  });

  test("300 configMap/secret volumes with escaping payload paths: the write is refused, nothing lands outside, the good volume keeps its files", () => {
    const rootDir = join(base, "root");
    const around = join(base, "around");
    mkdirSync(around, { recursive: true });
    const good = makePod({ name: "good", uid: "good-uid" });
    const objects = (data: Record<string, string>): PodApiObjects => ({
      namespace: "tenant",
      secrets: new Map([["s", { data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString("base64")])) }]]),
      configMaps: new Map([["c", { data }]]),
      tokens: new Map(),
    });
    const goodDir = setUpPodVolume(
      rootDir,
      { name: "cfg", configMap: { name: "c" } },
      { pod: good, objects: objects({ "app.conf": "good" }), nodeAllocatable: ALLOCATABLE },
    )!;
    for (let i = 0; i < 300; i++, generated++) {
      const path = hostileRelativePath(r);
      const pod = makePod({ name: `p${i}`, uid: `hostile-${i}` });
      const asKey = r.int(2) === 0;
      const objs = objects(asKey ? { [path]: "evil", fine: "x" } : { k: "evil" });
      const items = asKey ? undefined : [{ key: "k", path }];
      const v =
        r.int(2) === 0
          ? { name: "v", configMap: { name: "c", ...(items ? { items } : {}) } }
          : { name: "v", secret: { secretName: "s", ...(items ? { items } : {}) } };
      expect(() => setUpPodVolume(rootDir, v, { pod, objects: objs, nodeAllocatable: ALLOCATABLE })).toThrow(/^invalid path: /);
    }
    expect(readFileSync(join(goodDir, "app.conf"), "utf8")).toBe("good");
    expect(readdirSync(around)).toEqual([]);
    expect(readdirSync(base).sort()).toEqual(["around", "root"]);
    expect(readdirSync(rootDir)).toEqual(["pods"]);
  });

  test("300 sub paths that escape, literally or through symlinks in the volume: refused, nothing created outside", () => {
    const vol = join(base, "vol-sub");
    const outside = join(base, "vol-outside");
    mkdirSync(join(vol, "real"), { recursive: true });
    mkdirSync(outside, { recursive: true });
    const links = ["/etc", outside, "..", "../vol-outside", "/", "/proc/self/root"];
    links.forEach((t, i) => {
      symlinkSync(t, join(vol, `link${i}`));
    });
    symlinkSync("link0", join(vol, "chain")); // a link to a link out
    for (let i = 0; i < 300; i++, generated++) {
      const literal = r.int(2) === 0;
      let escaping = hostileRelativePath(r);
      while (!escaping.startsWith("/") && !escaping.split("/").includes("..")) escaping = hostileRelativePath(r);
      const sub = literal ? escaping : `${r.pick([...links.map((_, j) => `link${j}`), "chain", "real/../link1"])}${r.pick(["", "/x", "/new/dir", "/passwd"])}`;
      if (literal || sub.split("/").includes("..")) {
        expect(subPathError(sub)).toBeDefined();
        continue;
      }
      expect(() => prepareSubPath(vol, sub, "v", "c")).toThrow(/^failed to (prepare subPath|create subPath directory) for volumeMount "v" of container "c"$/);
    }
    expect(readdirSync(outside)).toEqual([]);
    expect(prepareSubPath(vol, "real", "v", "c")).toBe(join(vol, "real"));
  });

  test("200 probe and hook responses with bodies of up to 1 GiB: at most 10 KiB is read", async () => {
    for (let i = 0; i < 200; i++, generated++) {
      const size = 10 * 1024 + r.int(1024 * 1024 * 1024);
      let sent = 0;
      const fetch = (async () =>
        new Response(
          new ReadableStream({
            pull(c) {
              if (sent >= size) return c.close();
              const n = Math.min(64 * 1024, size - sent);
              sent += n;
              c.enqueue(new Uint8Array(n).fill(0x62));
            },
          }),
          { status: r.pick([200, 302, 500]) },
        )) as unknown as typeof globalThis.fetch;
      if (i % 2 === 0) {
        const probe = { httpGet: { path: "/", port: 80, scheme: "HTTP" }, timeoutSeconds: 1 } as unknown as Probe;
        const out = await runProbe(probe, { container: { name: "c", image: "i" } as never, containerId: "id", podIP: "10.0.0.1" }, { fetch });
        // A 3xx is a warning quoting the body after upstream's prefix; the body is cut all the same.
        expect(out.output.replace("Probe terminated redirects, Response body: ", "").length).toBeLessThanOrEqual(MAX_RESP_BODY_LENGTH);
      } else {
        const target = { pod: { name: "p", namespace: "d", uid: "u" }, container: { name: "c" }, containerId: "id", podIP: "10.0.0.1" };
        expect(
          await runLifecycleHandler({ httpGet: { port: 80 } }, target, { execSync: async () => ({ exitCode: 0, stdout: "", stderr: "" }), fetch }),
        ).toBeUndefined();
      }
      expect(sent).toBeLessThanOrEqual(MAX_RESP_BODY_LENGTH + 2 * 64 * 1024);
    }
  });

  test("at least 1,000 hostile objects were generated", () => {
    expect(generated).toBeGreaterThanOrEqual(1000);
  });
});
