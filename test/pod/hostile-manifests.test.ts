// Issue #14 findings 2, 3 and 10: hostile or invalid manifests in staticPodPath / staticPodURL are
// reported against their file (or URL and document) and never freeze a source or hurt other pods.
import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { realClock } from "../../src/clock.ts";
import { readStaticPods, createFileSource, type PodSource } from "../../src/pod/sources/file.ts";
import type { PodUpdate } from "../../src/pod/sources/update.ts";
import { decodeManifests } from "../../src/pod/manifest.ts";
import { waitFor } from "../support/cgroup.ts";
import { aliasBomb, podYaml } from "../support/hostile.ts";

const dirs: string[] = [];
const sources: PodSource[] = [];
afterEach(() => {
  for (const s of sources.splice(0)) s.stop();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), `bunlet-hostile-${process.pid}-`));
  dirs.push(d);
  return d;
}

describe("finding 2: a YAML alias bomb in staticPodPath", () => {
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

describe("finding 3: only regular files, bounded reads", () => {
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
      const src = createHttpSource({ url: `http://127.0.0.1:${server.port}/`, nodeName: "n", checkFrequencyMs: 60_000, clock: createSettlingClock(), onUpdate: () => {} });
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
