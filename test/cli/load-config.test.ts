import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadKubeletConfig } from "../../src/cli/load-config.ts";
import { ConfigError } from "../../src/config/errors.ts";

const HEAD = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n";
let dir = "";

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), `bunlet-load-config-${process.pid}-`));
});
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function loadError(argv: string[]): Promise<ConfigError> {
  try {
    await loadKubeletConfig(argv);
  } catch (e) {
    if (e instanceof ConfigError) return e;
    throw e;
  }
  throw new Error(`loadKubeletConfig(${JSON.stringify(argv)}) succeeded; expected a ConfigError`);
}

// Semantic threshold parsing is eviction's (src/eviction/thresholds-parse.ts); loadKubeletConfig calls it.
describe("eviction thresholds fail at startup", () => {
  test.each([
    [["--eviction-hard=memory.available<abc"], "--eviction-hard", "memory.available"],
    [["--eviction-hard=foo.available<1Gi"], "--eviction-hard", "foo.available"],
    [["--eviction-soft=memory.available<1Gi"], "--eviction-soft", "grace period must be specified"],
    [["--eviction-minimum-reclaim=memory.available=-1Gi"], "--eviction-minimum-reclaim", "memory.available"],
  ])("%p", async (argv, source, detail) => {
    const err = await loadError(argv);
    expect(err.message).toContain(source);
    expect(err.message).toContain(detail);
  });

  test("from the file, naming it", async () => {
    const p = join(dir, "config.yaml");
    writeFileSync(p, `${HEAD}evictionHard:\n  memory.available: 0Mi\n`);
    const err = await loadError(["--config", p]);
    expect(err.message).toContain("evictionHard");
    expect(err.message).toContain(p);
  });

  test("the defaults load", async () => {
    const l = await loadKubeletConfig([]);
    expect(l.config.evictionHard).toMatchObject({ "memory.available": "100Mi" });
  });
});
