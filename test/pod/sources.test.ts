import { describe, expect, test } from "bun:test";
import { writeFileSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { realClock } from "../../src/clock.ts";
import type { ManifestError } from "../../src/pod/manifest.ts";
import { createPodConfig } from "../../src/pod/sources/config-mux.ts";
import { createFileSource, createManifestCache, readStaticPods } from "../../src/pod/sources/file.ts";
import { createHttpSource } from "../../src/pod/sources/http.ts";
import type { PodUpdate } from "../../src/pod/sources/update.ts";
import { createSettlingClock } from "../support/settling-clock.ts";
import { waitFor } from "../support/cgroup.ts";
import { podSourceFixtures } from "../support/pod-source-fixtures.ts";

const pod = (name: string, image = "bunlet.local/busybox:1") =>
  `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\nspec:\n  containers:\n    - name: app\n      image: ${image}\n      command: [sleep, "3600"]\n`;

const { tempDir, sources } = podSourceFixtures("bunlet-pods");

describe("file source", () => {
  test("reads a directory, skips dotfiles, keeps good pods when one manifest is bad", async () => {
    const d = tempDir();
    writeFileSync(join(d, "a.yaml"), pod("a"));
    writeFileSync(join(d, ".a.yaml.swp"), "garbage: [");
    writeFileSync(
      join(d, "b.json"),
      JSON.stringify({ metadata: { name: "b" }, spec: { containers: [{ name: "c", image: "i", env: [{ name: "X", valueFrom: {} }] }] } }),
    );
    writeFileSync(join(d, "c.yaml"), `${pod("c1")}---\n${pod("c2")}`);
    const r = await readStaticPods(d, "node1");
    expect(r.pods.map((p) => p.metadata.name)).toEqual(["a-node1", "c1-node1", "c2-node1"]);
    expect(r.errors).toHaveLength(1);
    expect(r.errors[0]!.file).toBe(join(d, "b.json"));
    expect(r.errors[0]!.field).toBe("spec.containers[0].env[0].valueFrom");
    expect(r.pods[0]!.metadata.annotations?.["kubernetes.io/config.source"]).toBe("file");
  });

  test("with a cache, an unchanged file is not read again; a changed, a new or a removed file is", async () => {
    const d = tempDir();
    writeFileSync(join(d, "a.yaml"), pod("a"));
    writeFileSync(join(d, "b.yaml"), pod("b"));
    const cache = createManifestCache(0);
    const one = await readStaticPods(d, "n", {}, cache);
    const two = await readStaticPods(d, "n", {}, cache);
    expect(two.pods).toHaveLength(2);
    expect(two.pods[0]).toBe(one.pods[0]!);
    expect(two.pods[1]).toBe(one.pods[1]!);
    writeFileSync(join(d, "a.yaml"), pod("a", "bunlet.local/busybox:22"));
    writeFileSync(join(d, "c.yaml"), pod("c"));
    unlinkSync(join(d, "b.yaml"));
    const three = await readStaticPods(d, "n", {}, cache);
    expect(three.pods.map((p) => `${p.metadata.name} ${p.spec.containers[0]!.image}`)).toEqual(["a-n bunlet.local/busybox:22", "c-n bunlet.local/busybox:1"]);
    expect([...cache.entries.keys()].sort()).toEqual([join(d, "a.yaml"), join(d, "c.yaml")]);
    // A bad manifest's errors are its content's: cached as well, and still reported.
    writeFileSync(join(d, "c.yaml"), "kind: [");
    expect((await readStaticPods(d, "n", {}, cache)).errors).toHaveLength(1);
    expect((await readStaticPods(d, "n", {}, cache)).errors).toHaveLength(1);
  });

  test("a file changed within settleMs before its read is not cached (file times tick in jiffies)", async () => {
    const d = tempDir();
    writeFileSync(join(d, "a.yaml"), pod("a"));
    const cache = createManifestCache(60_000);
    const one = await readStaticPods(d, "n", {}, cache);
    expect(cache.entries.size).toBe(0);
    const two = await readStaticPods(d, "n", {}, cache);
    expect(two.pods[0]).not.toBe(one.pods[0]!);
    expect(two.pods[0]).toEqual(one.pods[0]!);
  });

  test("missing path: empty SET so the source counts as seen", async () => {
    const r = await readStaticPods("/nonexistent/bunlet-test", "n");
    expect(r).toEqual({ pods: [], errors: [], exists: false });
  });

  test("add, edit and remove manifests are acted on through fs.watch", async () => {
    const d = tempDir();
    writeFileSync(join(d, "a.yaml"), pod("a"));
    const updates: PodUpdate[] = [];
    let errors: ManifestError[] = [];
    const mux = createPodConfig({ clock: realClock, onUpdate: (u) => updates.push(u) });
    // A one-hour resync: anything seen below came from the watch.
    const src = createFileSource({
      path: d,
      nodeName: "n",
      checkFrequencyMs: 3_600_000,
      clock: realClock,
      onUpdate: (u) => mux.merge(u.source, u),
      onErrors: (e) => (errors = e),
      debounceMs: 20,
    });
    sources.push(src);
    await src.start();
    expect(updates.map((u) => `${u.op} ${u.pods.map((p) => p.metadata.name)}`)).toEqual(["ADD a-n"]);
    const uidA = updates[0]!.pods[0]!.metadata.uid;

    writeFileSync(join(d, "b.yaml"), pod("b"));
    await waitFor(() => updates.length >= 2, "ADD b");
    expect(updates[1]).toMatchObject({ op: "ADD", source: "file" });
    expect(updates[1]!.pods[0]!.metadata.name).toBe("b-n");

    writeFileSync(join(d, "a.yaml"), pod("a", "bunlet.local/busybox:2"));
    await waitFor(() => updates.length >= 4, "edit of a");
    // An edit changes the content hash, hence the UID: the old pod goes, the new one comes.
    expect(updates.slice(2).map((u) => u.op)).toEqual(["REMOVE", "ADD"]);
    expect(updates[2]!.pods[0]!.metadata.uid).toBe(uidA);
    expect(updates[3]!.pods[0]!.metadata.uid).not.toBe(uidA);

    writeFileSync(join(d, "bad.yaml"), "kind: Pod\nmetadata: {name: bad}\nspec: {containers: [{name: x}]}");
    await waitFor(() => errors.length === 1, "error for bad.yaml");
    expect(errors[0]!.message).toContain("bad.yaml");
    expect(errors[0]!.field).toBe("spec.containers[0].image");

    unlinkSync(join(d, "b.yaml"));
    await waitFor(() => updates.some((u) => u.op === "REMOVE" && u.pods[0]!.metadata.name === "b-n"), "REMOVE b");
    expect(
      mux
        .pods()
        .map((p) => p.metadata.name)
        .sort(),
    ).toEqual(["a-n"]);
  });
});

describe("http source", () => {
  test("fetches with headers; Pod, PodList and failures", async () => {
    let body = pod("web");
    let status = 200;
    const seenHeaders: string[] = [];
    const server = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch(req) {
        seenHeaders.push(req.headers.get("x-token") ?? "");
        return new Response(body, { status });
      },
    });
    try {
      const clock = createSettlingClock();
      const updates: PodUpdate[] = [];
      let errors: ManifestError[] = [];
      const url = `http://127.0.0.1:${server.port}/pods`;
      const src = createHttpSource({
        url,
        headers: { "X-Token": ["t1"] },
        nodeName: "n",
        checkFrequencyMs: 20_000,
        clock,
        onUpdate: (u) => updates.push(u),
        onErrors: (e) => (errors = e),
      });
      sources.push(src);
      await src.start();
      expect(seenHeaders).toEqual(["t1"]);
      expect(updates[0]!.op).toBe("SET");
      expect(updates[0]!.pods[0]!.metadata.name).toBe("web-n");
      expect(updates[0]!.pods[0]!.metadata.annotations?.["kubernetes.io/config.source"]).toBe("http");

      body = JSON.stringify({ kind: "PodList", items: [{ metadata: { name: "x" }, spec: { containers: [{ name: "c", image: "i" }] } }] });
      await src.resync();
      expect(updates[1]!.pods.map((p) => p.metadata.name)).toEqual(["x-n"]);

      status = 500;
      await src.resync();
      expect(updates).toHaveLength(2); // a failing endpoint keeps the previous pods
      expect(errors[0]!.message).toContain("500");

      status = 200;
      body = "";
      await src.resync();
      expect(updates[2]!.pods).toEqual([]);
    } finally {
      server.stop(true);
    }
  });
});
