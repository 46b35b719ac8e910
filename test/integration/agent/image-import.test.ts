// Offline images on a real containerd (1.6, the private test instance): image tarballs dropped into
// the image import directory of a running bunlet are imported through containerd's own API, and
// static pods waiting for them (imagePullPolicy Never / IfNotPresent, no registry anywhere) start —
// an OCI layout tarball and a gzipped docker-archive, each image new content (busybox plus a marker
// layer the pod reads). The directory's images are pinned: an image GC pass that must free everything
// removes an unpinned image and keeps a pinned one no pod uses. The drop → Running time is printed.
// Skipped when not root.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { realClock } from "../../../src/clock.ts";
import { overrideClient } from "../../../src/cri/client.ts";
import { createContainerdClient } from "../../../src/cri/containerd.ts";
import { createImageGCManager } from "../../../src/pod/images/index.ts";
import { importImageTarball } from "../../../src/pod/images/image-import.ts";
import type { Pod } from "../../../src/pod/types.ts";
import { canRunContainerd, testRuntime } from "../../support/containerd.ts";
import { busyboxLayout, markedImage, writeDockerArchiveTgz, writeOciTarball } from "../../support/image-tarballs.ts";
import { staticPodYaml } from "../../support/manifests.ts";
import { startStandaloneNode, type StandaloneNode } from "../../support/standalone.ts";
import { until } from "../../support/wait.ts";

const PID = process.pid;
const BASE = `/tmp/bunlet-image-import-${PID}`;
const NODE = "importtest";
const IMPORT_DIR = join(BASE, "root", "images");
const OCI = `bunlet.local/imported-oci-${PID}:v1`;
const DOCKER = `bunlet.local/imported-docker-${PID}:v1`;
const SPARE = `bunlet.local/imported-spare-${PID}:v1`;
const VICTIM = `bunlet.local/unpinned-${PID}:v1`;

const pod = (name: string, image: string, policy: string) =>
  staticPodYaml(name, {
    image,
    command: ["sh", "-c", "cat /imported-marker && exec sleep 3600"],
    terminationGracePeriodSeconds: 1,
    container: `      imagePullPolicy: ${policy}\n`,
  });

// bunlet imports the directory's tarballs through containerd's own API (src/cri/containerd.ts); CRI-O has
// no such API, and the CRI none for an import.
const onCrio = testRuntime === "crio";
if (onCrio) console.warn("skipping the image import directory tests: the import goes through containerd's own API, which CRI-O does not have");

describe.skipIf(!canRunContainerd() || onCrio)("image import directory on containerd", () => {
  let node: StandaloneNode;
  let layout: string;
  let base: string;

  const podNamed = async (name: string): Promise<Pod | undefined> => {
    const res = await fetch(`${base}/pods`);
    return ((await res.json()) as { items: Pod[] }).items.find((p) => p.metadata.name === `${name}-${NODE}`);
  };
  const runningAfterDrop = async (name: string, drop: () => void): Promise<number> => {
    const t0 = performance.now();
    drop();
    await until(`${name} Running`, async () => (await podNamed(name))?.status?.phase === "Running", 60_000, { intervalMs: 20 });
    return performance.now() - t0;
  };

  beforeAll(async () => {
    layout = busyboxLayout();
    node = await startStandaloneNode({
      base: BASE,
      cgroupRoot: `/bunlet-image-import-${PID}`,
      node: NODE,
      prepare: ({ manifests }) => {
        writeFileSync(join(manifests, "oci.yaml"), pod("oci", OCI, "Never"));
        writeFileSync(join(manifests, "docker.yaml"), pod("docker", DOCKER, "IfNotPresent"));
      },
    });
    base = node.url;
  }, 600_000);

  afterAll(async () => {
    await node?.stop();
    for (const name of [OCI, DOCKER, SPARE, VICTIM]) await node?.ctd.cri.removeImage(name).catch(() => {});
    if (layout) rmSync(layout, { recursive: true, force: true });
  }, 120_000);

  test("pods wait for their images while the directory is empty", async () => {
    await until(
      "oci waiting with ErrImageNeverPull",
      async () => (await podNamed("oci"))?.status?.containerStatuses?.[0]?.state?.waiting?.reason === "ErrImageNeverPull",
    );
    expect(await node.ctd.cri.imageStatus(OCI)).toBeNull();
  }, 60_000);

  test("an OCI layout tarball dropped into the directory: its pod Running, with no registry", async () => {
    const staged = join(BASE, "oci-images.tar");
    // The spare image's layer (20 MiB) takes three content Write calls, resumed by ref.
    writeOciTarball(staged, [markedImage(layout, OCI, "oci"), markedImage(layout, SPARE, "spare", 20 * 2 ** 20)]);
    const ms = await runningAfterDrop("oci", () => renameSync(staged, join(IMPORT_DIR, "oci-images.tar")));
    console.log(`image import: OCI layout tarball drop → pod Running ${ms.toFixed(0)} ms`);
    const img = await node.ctd.cri.imageStatus(OCI);
    expect(img?.repoTags).toContain(`${OCI}`);
    console.log(`image import: the runtime reports pinned=${img?.pinned} for ${OCI} (containerd 1.7+ reads io.cri-containerd.pinned)`);
    expect(await node.ctd.cri.imageStatus(SPARE)).not.toBeNull();
  }, 120_000);

  test("a gzipped docker-archive dropped into the directory: its pod Running", async () => {
    const staged = join(BASE, "docker-image.tgz");
    writeDockerArchiveTgz(staged, markedImage(layout, DOCKER, "docker"));
    const ms = await runningAfterDrop("docker", () => renameSync(staged, join(IMPORT_DIR, "docker-image.tgz")));
    console.log(`image import: docker-archive .tgz drop → pod Running ${ms.toFixed(0)} ms`);
    expect(node.agent.imageImport.pinnedImages().sort()).toEqual([DOCKER, OCI, SPARE].sort());
  }, 120_000);

  test("image GC removes an unpinned unused image and keeps the directory's unused one", async () => {
    // Imported outside the directory and not pinned (a runtime that reads the pinned label, containerd
    // 1.7 and later, would keep it from image GC).
    const staged = join(BASE, "victim.tar");
    writeOciTarball(staged, [markedImage(layout, VICTIM, "victim")]);
    const containerd = createContainerdClient({ endpoint: node.ctd.endpoint });
    try {
      await importImageTarball(staged, { containerd, workDir: join(BASE, "work"), now: Date.now, pin: false });
    } finally {
      containerd.close();
    }
    await until("victim listed by the CRI", async () => (await node.ctd.cri.imageStatus(VICTIM)) !== null);
    // The agent's GC policy over this test's images only (the test containerd's others serve other tests),
    // with a full image filesystem: everything unused and unpinned must go.
    const cri = overrideClient(node.ctd.cri, {
      listImages: async (f) => (await node.ctd.cri.listImages(f)).filter((i) => i.repoTags.some((t) => t.includes(`-${PID}:`))),
    });
    const gc = createImageGCManager({
      cri,
      clock: realClock,
      policy: { highThresholdPercent: 1, lowThresholdPercent: 0, minAgeMs: 0 },
      imageFsStats: async () => ({ capacityBytes: 100 * 2 ** 30, availableBytes: 0 }),
      keepImages: async () => node.agent.imageImport.pinnedImages(),
    });
    const result = await gc.garbageCollect().catch((e: Error & { result?: { removed: string[] } }) => e.result);
    expect(result?.removed.some((n) => n.includes(VICTIM))).toBe(true);
    expect(await node.ctd.cri.imageStatus(VICTIM)).toBeNull();
    expect(await node.ctd.cri.imageStatus(SPARE)).not.toBeNull();
    expect(await node.ctd.cri.imageStatus(OCI)).not.toBeNull();
  }, 120_000);
});
