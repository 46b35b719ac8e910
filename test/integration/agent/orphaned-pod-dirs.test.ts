// Orphaned pod directories through the whole node agent on a private containerd: directories under
// <rootDir>/pods left by an earlier bunlet (a crash, a pod deleted while it was down) are removed at
// housekeeping once the sources are ready — one with files goes, one with a volume still mounted stays
// (and is reported) until the volume is unmounted, and the running static pod's directory stays.
// CSI data handed to a driver that is gone is covered by test/pod/orphaned-pod-dirs.test.ts; the volumes
// torn down after a restart by volume-reconstruct.test.ts. The mount here has no vol_data.json, so it
// cannot be reconstructed and stays.
// Skipped when not root.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ConsolaReporter } from "consola/core";
import { log } from "../../../src/log.ts";
import type { Pod } from "../../../src/pod/types.ts";
import { mountPointsUnder } from "../../../src/pod/volumes/mount-points.ts";
import { canRunContainerd } from "../../support/containerd.ts";
import { staticPodYaml } from "../../support/manifests.ts";
import { startStandaloneNode, type StandaloneNode } from "../../support/standalone.ts";
import { until } from "../../support/wait.ts";

const PID = process.pid;
const BASE = `/tmp/bunlet-orphans-${PID}`;
const PODS = join(BASE, "root", "pods");
const NODE = "orphanstest";
const STRAY = "0b0e4b8e-1c39-4d8e-9b57-5f0c2a7d0001";
const HELD = "0b0e4b8e-1c39-4d8e-9b57-5f0c2a7d0002";
const HELD_MOUNT = join(PODS, HELD, "volumes", "kubernetes.io~csi", "pv", "mount");

/** <PODS>/<uid>/<rel> holding `text`. */
function write(uid: string, rel: string, text = "x"): void {
  const p = join(PODS, uid, rel);
  mkdirSync(join(p, ".."), { recursive: true });
  writeFileSync(p, text);
}

const unmountHeld = () => {
  if (mountPointsUnder(HELD_MOUNT).length > 0) spawnSync("umount", [HELD_MOUNT], { stdio: "ignore" });
};

describe.skipIf(!canRunContainerd())("orphaned pod directories through the node agent", () => {
  let node: StandaloneNode | undefined;
  const lines: string[] = [];
  const capture: ConsolaReporter = { log: (o) => void lines.push(o.args.map(String).join(" ")) };

  beforeAll(async () => {
    log.addReporter(capture);
    node = await startStandaloneNode({
      base: BASE,
      cgroupRoot: `/bunlet-orphans-${PID}`,
      node: NODE,
      prepare: ({ ctd, manifests }) => {
        writeFileSync(
          join(manifests, "live.yaml"),
          staticPodYaml("live", { image: ctd.images.busybox, command: ["sleep", "3600"], terminationGracePeriodSeconds: 1 }),
        );
        // Left by an earlier bunlet: a pod's files (termination log, hosts file, an emptyDir's file) …
        write(STRAY, "containers/app/0", "last words");
        write(STRAY, "etc-hosts");
        write(STRAY, "volumes/kubernetes.io~empty-dir/cache/f");
        // … and a CSI volume still published (a tmpfs stands for the driver's mount).
        mkdirSync(HELD_MOUNT, { recursive: true });
        const r = spawnSync("mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", HELD_MOUNT], { encoding: "utf8" });
        if (r.status !== 0) throw new Error(`mount tmpfs ${HELD_MOUNT}: ${r.stderr}`);
        writeFileSync(join(HELD_MOUNT, "data"), "precious");
      },
    });
  }, 600_000);

  afterAll(async () => {
    log.removeReporter(capture);
    unmountHeld();
    await node?.stop();
  }, 120_000);

  test("a stray pod directory with files goes; one with a volume mounted stays until it is unmounted; the live pod's stays", async () => {
    const live = await until(
      "live Running",
      async () => {
        const items = ((await (await fetch(`${node!.url}/pods`)).json()) as { items: Pod[] }).items;
        return items.find((p) => p.metadata.name === `live-${NODE}` && p.status?.phase === "Running");
      },
      60_000,
    );
    await until("the stray pod directory removed", () => !existsSync(join(PODS, STRAY)), 30_000, { intervalMs: 200 });
    await until(
      "the held pod directory reported",
      () => lines.some((l) => l.includes("orphaned pod found, but volumes are still mounted on disk") && l.includes(`podUID=${HELD}`)),
      30_000,
      { intervalMs: 200 },
    );
    expect(existsSync(join(HELD_MOUNT, "data"))).toBe(true);
    expect(existsSync(join(PODS, live.metadata.uid!))).toBe(true);
    unmountHeld();
    await until("the held pod directory removed once unmounted", () => !existsSync(join(PODS, HELD)), 30_000, { intervalMs: 200 });
    expect(existsSync(join(PODS, live.metadata.uid!))).toBe(true);
  }, 120_000);
});
