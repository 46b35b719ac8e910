import { describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createPodLifecycleFromConfig, nodeNameFrom } from "../../src/pod/setup.ts";
import { createSettlingClock } from "../support/settling-clock.ts";
import { createFakeRuntime } from "./fake-runtime.ts";

describe("createPodLifecycleFromConfig", () => {
  test.each([
    [" Node-A ", "node-a"],
    [undefined, undefined],
  ])("node name from hostnameOverride %p", (o, want) => {
    const n = nodeNameFrom(o);
    if (want) expect(n).toBe(want);
    else expect(n).toBe(n.toLowerCase());
  });

  test("wires sources, node IP and cgroups from the config", async () => {
    // A fake cgroup mount with only a memory controller: enough for detection, no real cgroups touched.
    const root = mkdtempSync(join(tmpdir(), `bunlet-setup-${process.pid}-`));
    const manifests = join(root, "manifests");
    try {
      mkdirSync(join(root, "memory"), { recursive: true });
      writeFileSync(join(root, "memory", "cgroup.procs"), "");
      mkdirSync(manifests);
      writeFileSync(join(manifests, "a.yaml"), "kind: Pod\nmetadata: {name: a}\nspec: {containers: [{name: c, image: i}]}\n");
      const clock = createSettlingClock();
      const rt = createFakeRuntime(clock.now);
      const r = createPodLifecycleFromConfig({
        config: {
          staticPodPath: manifests,
          syncFrequency: "1m0s",
          fileCheckFrequency: "20s",
          cgroupsPerQOS: true,
          cgroupRoot: "/t",
          podPidsLimit: -1,
          enforceNodeAllocatable: ["pods"],
          systemReserved: { memory: "1Gi" },
        },
        flags: { hostnameOverride: "Edge-1", nodeIP: "192.0.2.7,2001:db8::7" },
        runtime: rt,
        clock,
        capacity: { memoryBytes: 4 * 2 ** 30, cpus: 2 },
        cgroupMountRoot: root,
      });
      expect(r.nodeName).toBe("edge-1");
      expect(r.hostIP).toBe("192.0.2.7");
      expect(r.cgroups?.controllers()).toEqual(["memory"]);
      await r.lifecycle.start();
      await clock.advance(0);
      await r.lifecycle.whenIdle();
      const pods = r.lifecycle.listPodsForApi();
      expect(pods.map((p) => p.metadata.name)).toEqual(["a-edge-1"]);
      expect(pods[0]!.status!.hostIP).toBe("192.0.2.7");
      const { readFileSync } = await import("node:fs");
      expect(readFileSync(join(root, "memory", "t", "kubepods", "memory.limit_in_bytes"), "utf8")).toBe(String(3 * 2 ** 30));
      await r.lifecycle.stop();
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  test("cgroupsPerQOS=false: no pod cgroups", () => {
    const r = createPodLifecycleFromConfig({ config: { cgroupsPerQOS: false }, flags: {}, runtime: createFakeRuntime(Date.now) });
    expect(r.cgroups).toBeUndefined();
  });
});
