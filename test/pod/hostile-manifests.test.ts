// Hostile or invalid manifests in staticPodPath / staticPodURL are
// reported against their file (or URL and document) and never freeze a source or hurt other pods.
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { realClock } from "../../src/clock.ts";
import { readStaticPods, createFileSource } from "../../src/pod/sources/file.ts";
import type { PodUpdate } from "../../src/pod/sources/update.ts";
import { decodeManifests } from "../../src/pod/manifest.ts";
import { waitFor } from "../support/cgroup.ts";
import { aliasBomb, podYaml } from "../support/hostile.ts";
import { podSourceFixtures } from "../support/pod-source-fixtures.ts";

const { tempDir, sources } = podSourceFixtures("bunlet-hostile");

describe("a YAML alias bomb in staticPodPath", () => {
  test("is an error of its own file and document; the other files' pods still come", async () => {
    const d = tempDir();
    writeFileSync(join(d, "a.yaml"), podYaml("a"));
    writeFileSync(join(d, "bomb.yaml"), `${podYaml("ok")}---\n${aliasBomb}`);
    const r = await readStaticPods(d, "n");
    expect(r.pods.map((p) => p.metadata.name).sort()).toEqual(["a-n", "ok-n"]);
    expect(r.errors).toHaveLength(1);
    expect(r.errors[0]!.file).toBe(join(d, "bomb.yaml"));
    expect(r.errors[0]!.field).toBe("document 1");
    expect(r.errors[0]!.detail).toMatch(/alias/i);
  });

  test("decodeManifests never throws on it", () => {
    const r = decodeManifests(aliasBomb, "u");
    expect(r.pods).toEqual([]);
    expect(r.errors[0]!.message).toMatch(/^invalid pod manifest u: .*alias/);
  });

  test("the directory source is not frozen: files added after it still become pods", async () => {
    const d = tempDir();
    writeFileSync(join(d, "bomb.yaml"), aliasBomb);
    const updates: PodUpdate[] = [];
    const src = createFileSource({ path: d, nodeName: "n", checkFrequencyMs: 3_600_000, clock: realClock, onUpdate: (u) => updates.push(u), debounceMs: 10 });
    sources.push(src);
    await src.start();
    expect(src.errors()[0]!.file).toBe(join(d, "bomb.yaml"));
    writeFileSync(join(d, "b.yaml"), podYaml("b"));
    await waitFor(() => updates.some((u) => u.pods.some((p) => p.metadata.name === "b-n")), "pod b from the watched directory");
  });
});

describe("only regular files, bounded reads", () => {
  test("symlinks to /dev/zero, a FIFO, a directory are skipped; a link to a regular file is read", async () => {
    const { symlinkSync, mkdirSync } = await import("node:fs");
    const d = tempDir();
    writeFileSync(join(d, "a.yaml"), podYaml("a"));
    const real = tempDir();
    writeFileSync(join(real, "linked.yaml"), podYaml("linked"));
    symlinkSync(join(real, "linked.yaml"), join(d, "linked.yaml"));
    symlinkSync("/dev/zero", join(d, "zero.yaml"));
    Bun.spawnSync(["mkfifo", join(d, "fifo.yaml")]);
    mkdirSync(join(d, "sub.yaml"));
    const rssBefore = process.memoryUsage().rss;
    const r = await readStaticPods(d, "n");
    expect(r.pods.map((p) => p.metadata.name).sort()).toEqual(["a-n", "linked-n"]);
    expect(r.errors).toEqual([]);
    expect(r.warnings!.map((w) => `${w.file.slice(d.length + 1)}: ${w.reason}`).sort()).toEqual([
      "fifo.yaml: Manifest path is not a directory or file (FIFO)",
      "sub.yaml: Not recursing into manifest path",
      "zero.yaml: Manifest path is not a directory or file (character device)",
    ]);
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(200 * 1024 * 1024);
  });

  test("an oversized file and a non-UTF-8 file are errors naming the file", async () => {
    const d = tempDir();
    writeFileSync(join(d, "big.yaml"), `${podYaml("big")}  annotations:\n    x: "${"y".repeat(1024 * 1024)}"\n`);
    writeFileSync(join(d, "latin1.yaml"), Buffer.concat([Buffer.from(podYaml("l")), Buffer.from([0xff, 0xfe, 0x0a])]));
    writeFileSync(join(d, "ok.yaml"), podYaml("ok"));
    const r = await readStaticPods(d, "n");
    expect(r.pods.map((p) => p.metadata.name)).toEqual(["ok-n"]);
    const byFile = Object.fromEntries(r.errors.map((e) => [e.file.slice(d.length + 1), e.detail]));
    expect(byFile["big.yaml"]).toMatch(/^manifest is \d+ bytes, more than the 524288 bytes bunlet reads/);
    expect(byFile["latin1.yaml"]).toBe("manifest is not valid UTF-8 text");
  });

  test("a staticPodURL body past the cap is aborted while streaming, not read whole", async () => {
    const { createHttpSource } = await import("../../src/pod/sources/http.ts");
    const { createSettlingClock } = await import("../support/settling-clock.ts");
    let sent = 0;
    let cancelled = false;
    const chunk = new Uint8Array(64 * 1024).fill(0x61);
    const server = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch: () =>
        new Response(
          new ReadableStream({
            pull(c) {
              // An endless ("600 MB") body: only a reader that stops keeps this bounded.
              if (sent > 600 * 1024 * 1024) return c.close();
              sent += chunk.byteLength;
              c.enqueue(chunk);
            },
            cancel() {
              cancelled = true;
            },
          }),
        ),
    });
    try {
      const src = createHttpSource({
        url: `http://127.0.0.1:${server.port}/`,
        nodeName: "n",
        checkFrequencyMs: 60_000,
        clock: createSettlingClock(),
        onUpdate: () => {},
      });
      sources.push(src);
      await src.start();
      expect(src.errors()[0]!.message).toMatch(/response body is more than 524288 bytes/);
      expect(sent).toBeLessThan(64 * 1024 * 1024);
      await waitFor(() => cancelled || sent < 64 * 1024 * 1024, "server side stops sending");
    } finally {
      server.stop(true);
    }
  });
});

describe("upstream validation; an invalid edit keeps the running pod", () => {
  const withMeta = (meta: string, container = "") =>
    `apiVersion: v1\nkind: Pod\nmetadata:\n${meta}spec:\n  containers:\n    - name: app\n      image: i\n${container}`;
  test.each([
    [
      "a 250-character name (253 with the node suffix is the limit)",
      withMeta(`  name: ${"a".repeat(250)}\n`),
      "metadata.name",
      /must be no more than 253 characters/,
    ],
    ["a name whose log directory would pass NAME_MAX", withMeta(`  name: ${"a".repeat(220)}\n`), "metadata.name", /pod log directory .* fits in 255 bytes/],
    ["a bad label key", withMeta("  name: x\n  labels: {'bad key!': v}\n"), "metadata.labels", /name part must consist of alphanumeric characters/],
    ["a bad label value", withMeta("  name: x\n  labels: {app: 'a b'}\n"), "metadata.labels[app]", /a valid label must be an empty string/],
    [
      "a label value of 64 characters",
      withMeta(`  name: x\n  labels: {app: ${"v".repeat(64)}}\n`),
      "metadata.labels[app]",
      /must be no more than 63 characters/,
    ],
    [
      "annotations over 256 KiB",
      withMeta(`  name: x\n  annotations: {a: ${"b".repeat(300 * 1024)}}\n`),
      "metadata.annotations",
      /^Too long: must have at most 262144 bytes$/,
    ],
    [
      "a negative memory limit",
      withMeta("  name: x\n", "      resources: {limits: {memory: -5Gi}}\n"),
      "spec.containers[0].resources.limits[memory]",
      /^Invalid value: "-5Gi": must be greater than or equal to 0$/,
    ],
    [
      "a request above its limit",
      withMeta("  name: x\n", "      resources: {requests: {cpu: '2'}, limits: {cpu: '1'}}\n"),
      "spec.containers[0].resources.requests[cpu]",
      /must be less than or equal to cpu limit of 1/,
    ],
  ])("refused: %s", async (_what, text, field, detail) => {
    const d = tempDir();
    writeFileSync(join(d, "p.yaml"), text);
    const r = await readStaticPods(d, "node1");
    expect(r.pods).toEqual([]);
    expect(r.errors.length).toBeGreaterThanOrEqual(1);
    expect(r.errors[0]!.file).toBe(join(d, "p.yaml"));
    expect(r.errors[0]!.field).toBe(field);
    expect(r.errors[0]!.detail).toMatch(detail);
  });

  test("an edit adding an unsupported field leaves the running pod as it was and says so", async () => {
    const { createPodConfig } = await import("../../src/pod/sources/config-mux.ts");
    const d = tempDir();
    writeFileSync(join(d, "web.yaml"), podYaml("web"));
    const updates: PodUpdate[] = [];
    const mux = createPodConfig({ clock: realClock, onUpdate: (u) => updates.push(u) });
    const src = createFileSource({
      path: d,
      nodeName: "n",
      checkFrequencyMs: 3_600_000,
      clock: realClock,
      onUpdate: (u) => mux.merge(u.source, u),
      debounceMs: 10,
    });
    sources.push(src);
    await src.start();
    const uid = mux.pods()[0]!.metadata.uid;
    writeFileSync(join(d, "web.yaml"), `${podYaml("web")}  resources: { limits: { cpu: "2" } }\n`);
    await src.resync();
    expect(src.errors()[0]!.file).toBe(join(d, "web.yaml"));
    expect(src.errors()[0]!.field).toBe("spec.resources");
    expect(mux.pods().map((p) => p.metadata.uid)).toEqual([uid]);
    expect(updates.map((u) => u.op)).toEqual(["ADD"]); // no REMOVE: the running pod stays
    // A valid new version replaces it as usual.
    writeFileSync(join(d, "web.yaml"), podYaml("web", "bunlet.local/busybox:2"));
    await src.resync();
    expect(src.errors()).toEqual([]);
    expect(updates.map((u) => u.op)).toEqual(["ADD", "REMOVE", "ADD"]);
  });

  test("the duplicate-name error names both files", async () => {
    const d = tempDir();
    writeFileSync(join(d, "a.yaml"), podYaml("same"));
    writeFileSync(join(d, "b.yaml"), podYaml("same", "other:1"));
    const src = createFileSource({ path: d, nodeName: "n", checkFrequencyMs: 3_600_000, clock: realClock, onUpdate: () => {} });
    sources.push(src);
    await src.start();
    expect(src.errors()).toHaveLength(1);
    expect(src.errors()[0]!.file).toBe(join(d, "b.yaml"));
    expect(src.errors()[0]!.message).toContain(`metadata.name: Duplicate value: "default/same-n": the pod name is already used by ${join(d, "a.yaml")}`);
  });
});
