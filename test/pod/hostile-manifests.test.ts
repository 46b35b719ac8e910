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
