// The root directory on a private mount (this host's "/" is private; the test makes a private tmpfs of
// its own, since bun test runs in a namespace whose "/" is rshared): bunlet bind-mounts the root
// directory on itself and makes it rshared at start (upstream MakeRShared), so the runtime accepts a
// privileged pod mounting <root>/pods with Bidirectional propagation — as a CSI node plugin's pod does —
// and a mount the container makes there shows on the host, where the volume manager looks for it.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import type { Pod } from "../../../src/pod/types.ts";
import { isShared } from "../../../src/pod/volumes/hostutil.ts";
import { mountHolding } from "../../../src/pod/volumes/mount-points.ts";
import { canRunContainerd } from "../../support/containerd.ts";
import { staticPodYaml } from "../../support/manifests.ts";
import { startStandaloneNode, type StandaloneNode } from "../../support/standalone.ts";
import { until } from "../../support/wait.ts";

const PID = process.pid;
const BASE = `/tmp/bunlet-rshared-${PID}`;
const ROOT_DIR = join(BASE, "root");
const NODE = "rshared";
const mountinfo = () => readFileSync("/proc/self/mountinfo", "utf8");
const sh = (args: string[]) => {
  const r = spawnSync(args[0]!, args.slice(1), { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`${args.join(" ")}: ${r.stderr || r.error?.message}`);
};

/** A privileged pod mounting <root>/pods Bidirectional that mounts a tmpfs there and writes a file in it. */
const plugin = (image: string) =>
  staticPodYaml("plugin", {
    image,
    command: ["sh", "-c", "mkdir -p /kp/probe && mount -t tmpfs probe /kp/probe && echo from-the-pod > /kp/probe/f && exec sleep 3600"],
    terminationGracePeriodSeconds: 1,
    container: [
      "      securityContext: { privileged: true }",
      "      volumeMounts: [{ name: pods, mountPath: /kp, mountPropagation: Bidirectional }]",
      "  volumes:",
      `    - { name: pods, hostPath: { path: ${join(ROOT_DIR, "pods")}, type: DirectoryOrCreate } }`,
      "",
    ].join("\n"),
  });

describe.skipIf(!canRunContainerd())("root directory on a private mount", () => {
  let node: StandaloneNode | undefined;

  beforeAll(async () => {
    mkdirSync(BASE, { recursive: true });
    sh(["mount", "-t", "tmpfs", "-o", "size=16m", "bunlet-rshared", BASE]);
    sh(["mount", "--make-private", BASE]);
    node = await startStandaloneNode({
      base: BASE,
      cgroupRoot: `/bunlet-rshared-${PID}`,
      node: NODE,
      prepare: ({ ctd, manifests }) => {
        expect(isShared(BASE, mountinfo())).toBe(false);
        writeFileSync(join(manifests, "plugin.yaml"), plugin(ctd.images.busybox));
      },
    });
  }, 600_000);

  afterAll(async () => {
    // Removes the pods, then unmounts everything under BASE (the pod's tmpfs, the bind, BASE's tmpfs).
    await node?.stop();
  }, 120_000);

  test("the root directory is a mount of its own, shared", () => {
    expect(mountHolding(ROOT_DIR, mountinfo())?.mountPoint).toBe(ROOT_DIR);
    expect(isShared(ROOT_DIR, mountinfo())).toBe(true);
  });

  test("a Bidirectional pod runs, and its mount under <root>/pods shows on the host", async () => {
    const pod = await until("plugin Running", async () => {
      const items = ((await (await fetch(`${node!.url}/pods`)).json()) as { items: Pod[] }).items;
      const p = items.find((i) => i.metadata.name === `plugin-${NODE}`);
      return p?.status?.phase === "Running" ? p : undefined;
    });
    expect(pod.status?.containerStatuses?.[0]?.ready).toBe(true);
    const probe = join(ROOT_DIR, "pods", "probe");
    await until("the pod's tmpfs on the host", () => (existsSync(join(probe, "f")) ? true : undefined));
    expect(readFileSync(join(probe, "f"), "utf8")).toBe("from-the-pod\n");
    expect(mountHolding(probe, mountinfo())?.mountPoint).toBe(probe);
  }, 120_000);
});
