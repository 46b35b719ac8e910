// The eviction wiring reads <rootDir>/eviction/state.json at construction: kubelet_evictions starts from
// the recorded counts and an evicted static pod (same UID) is refused at admission (eviction/record-file.ts).
import { afterAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../src/config/load.ts";
import type { CriClient } from "../../src/cri/client.ts";
import type { PodAdmitHandler, PodLifecycle } from "../../src/pod/lifecycle-types.ts";
import { createRegistry } from "../../src/server/metrics.ts";
import { createEvictionWiring } from "../../src/wire/eviction.ts";
import { makePod } from "../pod/fake-runtime.ts";

const root = mkdtempSync(join(tmpdir(), "bunlet-evwire-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

test("recorded counts seed kubelet_evictions; an evicted static pod is refused with its eviction message", async () => {
  mkdirSync(join(root, "eviction"));
  const message = "The node was low on resource: memory. Threshold quantity: 100Mi, available: 80Mi. ";
  writeFileSync(
    join(root, "eviction", "state.json"),
    JSON.stringify({
      version: 1,
      evictions: { "memory.available": 4 },
      evicted: [
        { uid: "uid-v1", namespace: "default", name: "web-n1", source: "file", signal: "memory.available", message, evictedAt: "2026-12-01T21:00:00.000Z" },
      ],
    }),
  );
  const { config } = await loadConfig(["--evict-static-pods=true"]);
  const handlers: PodAdmitHandler[] = [];
  const lifecycle = {
    addAdmitHandler: (h: PodAdmitHandler) => void handlers.push(h),
    activePods: () => [],
    onStatusChange: () => () => {},
  } as unknown as PodLifecycle;
  const metrics = createRegistry();
  createEvictionWiring({ config, rootDir: root, nodeName: "n1", lifecycle, cri: {} as CriClient, podCgroupPath: () => undefined, metrics });
  expect(metrics.render()).toContain('kubelet_evictions{eviction_signal="memory.available"} 4');
  const annotations = { "kubernetes.io/config.source": "file", "kubernetes.io/config.hash": "h" };
  const refused = handlers.map((h) => h(makePod({ name: "web-n1", uid: "uid-v1", annotations }), [])).find((r) => !r.admit);
  expect(refused).toEqual({ admit: false, reason: "Evicted", message });
  // The edited manifest (new UID) and API pods are admitted.
  expect(handlers.every((h) => h(makePod({ name: "web-n1", uid: "uid-v2", annotations }), []).admit)).toBe(true);
  expect(handlers.every((h) => h(makePod({ name: "web-n1", uid: "uid-v1", annotations: { "kubernetes.io/config.source": "api" } }), []).admit)).toBe(true);
});
