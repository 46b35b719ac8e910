// The built binary's one-shot commands: help, version, config print, errors.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "yaml";
import { KUBELET_FLAGS } from "../../src/config/flags.ts";
import { ensureBuilt, freePort, killAll, ROOT, runBunlet, spawnBunlet, waitForHealthz } from "../support/binary.ts";

let dir: string;
beforeAll(async () => {
  await ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), `bunlet-e2e-cli-${process.pid}-`));
}, 120_000);
afterAll(async () => {
  await killAll();
  rmSync(dir, { recursive: true, force: true });
});

describe("bunlet --help", () => {
  test("lists every kubelet flag with its default, and the subcommands", async () => {
    const { code, stdout } = await runBunlet(["--help"]);
    expect(code).toBe(0);
    const lines = stdout.split("\n");
    for (const f of KUBELET_FLAGS) {
      const line = lines.find((l) => new RegExp(`^\\s+(-\\w, )?--${f.name}(\\s|$)`).test(l));
      expect(line, `--${f.name} missing from --help`).toBeDefined();
      if (f.default) expect(line!, `--${f.name} default`).toContain(`(default ${f.default})`);
    }
    for (const cmd of ["version", "config", "debug", "eviction"]) expect(stdout).toMatch(new RegExp(`^  ${cmd}\\s`, "m"));
  });

  test("a subcommand's help comes from citty", async () => {
    const { code, stdout } = await runBunlet(["config", "print", "--help"]);
    expect(code).toBe(0);
    expect(stdout).toContain("--output");
  });
});

describe("bunlet version", () => {
  test("text and json", async () => {
    const text = await runBunlet(["version"]);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^bunlet v\d+\.\d+\.\d+\nbun v\d+\.\d+\.\d+/);
    const json = await runBunlet(["version", "--output", "json"]);
    expect(JSON.parse(json.stdout)).toMatchObject({ bunletVersion: expect.stringMatching(/^v\d/), bunVersion: Bun.version });
  });

  test("runs outside the source tree with no node_modules", async () => {
    const binary = join(dir, "bunlet");
    copyFileSync(join(ROOT, "dist", "bunlet"), binary);
    const { code, stdout, stderr } = await runBunlet(["version"], { binary, cwd: dir });
    expect(stderr).toBe("");
    expect(code).toBe(0);
    expect(stdout).toStartWith("bunlet v");
    // The agent itself too (libc through dlopen, no files from the tree).
    const healthz = freePort();
    const agent = spawnBunlet([`--root-dir=${join(dir, "root")}`, `--healthz-port=${healthz}`, `--port=${freePort()}`, "--read-only-port=0"], {
      binary,
      cwd: dir,
    });
    await waitForHealthz(agent, `http://127.0.0.1:${healthz}/healthz`);
    expect(await agent.stop("SIGTERM")).toBe(0);
  }, 30_000);
});

describe("bunlet config print", () => {
  test("example file + --eviction-hard flag: the flag wins, the file's other fields stay", async () => {
    const { code, stdout, stderr } = await runBunlet(["config", "print", "--config", "examples/kubelet-config.yaml", "--eviction-hard=memory.available<300Mi"]);
    expect(stderr).not.toContain("error");
    expect(code).toBe(0);
    const cfg = parse(stdout);
    expect(cfg.kind).toBe("KubeletConfiguration");
    expect(cfg.apiVersion).toBe("kubelet.config.k8s.io/v1beta1");
    // A map flag replaces the file's whole map, as the kubelet does.
    expect(cfg.evictionHard).toEqual({ "memory.available": "300Mi" });
    expect(cfg.healthzPort).toBe(10248);
    expect(cfg.readOnlyPort).toBe(10255);
    expect(cfg.staticPodPath).toBe(join(ROOT, "examples", "manifests"));
    expect(cfg.evictionSoftGracePeriod).toEqual({ "memory.available": "30s" });
    // Defaults the file leaves out are filled in.
    expect(cfg.nodeStatusUpdateFrequency).toBe("10s");
  });

  test("--output json is JSON of the same configuration", async () => {
    const { code, stdout } = await runBunlet(["config", "print", "--config=examples/kubelet-config.yaml", "-o", "json"]);
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({ kind: "KubeletConfiguration", port: 10250, evictionHard: { "memory.available": "100Mi" } });
  });

  test("an invalid field exits 1 naming the field", async () => {
    const file = join(dir, "bad.yaml");
    writeFileSync(file, "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nhealthzPort: lots\n");
    const { code, stdout, stderr } = await runBunlet(["config", "print", "--config", file]);
    expect(code).toBe(1);
    expect(stdout).toBe("");
    expect(stderr).toStartWith("error: ");
    expect(stderr).toContain("healthzPort");
  });

  test("a bad --output value exits 1", async () => {
    const { code, stderr } = await runBunlet(["config", "print", "--output=xml"]);
    expect(code).toBe(1);
    expect(stderr).toContain("xml");
  });
});

describe("startup errors (nothing is left running)", () => {
  test("bad config file exits 1 naming the field", async () => {
    const file = join(dir, "bad-eviction.yaml");
    writeFileSync(file, "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nevictionHard:\n  memory.available: plenty\n");
    const { code, stderr } = await runBunlet(["--config", file], { timeoutMs: 10_000 });
    expect(code).toBe(1);
    expect(stderr).toStartWith("error: ");
    expect(stderr).toContain("memory.available");
  });

  test("unknown flag exits 1 as the kubelet does", async () => {
    const { code, stderr } = await runBunlet(["--no-such-flag"]);
    expect(code).toBe(1);
    expect(stderr).toContain("error: unknown flag: --no-such-flag");
  });

  test("--exit-on-lock-contention without --lock-file is refused with the kubelet's message", async () => {
    const { code, stderr } = await runBunlet(["--exit-on-lock-contention", "--healthz-port=0", "--read-only-port=0", "--port", String(freePort())]);
    expect(code).toBe(1);
    expect(stderr).toContain("error: cannot exit on lock file contention: no lock file specified");
  });
});
