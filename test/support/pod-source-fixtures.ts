// What a pod source test file sets up per test: temporary manifest directories, and the sources it
// starts; after each test the sources are stopped and the directories removed.
import { afterEach } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { PodSource } from "../../src/pod/sources/pod-source.ts";

/** Registers the afterEach; `prefix` names the directories (<prefix>-<pid>-…). `sources` takes the sources to stop. */
export function podSourceFixtures(prefix: string): { tempDir(): string; sources: PodSource[] } {
  const dirs: string[] = [];
  const sources: PodSource[] = [];
  afterEach(() => {
    for (const s of sources.splice(0)) s.stop();
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  return {
    tempDir() {
      const d = mkdtempSync(join(tmpdir(), `${prefix}-${process.pid}-`));
      dirs.push(d);
      return d;
    },
    sources,
  };
}
