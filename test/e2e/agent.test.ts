// The built binary as a running agent: config merge seen through /configz, endpoints, signals,
// lock file semantics of upstream --lock-file/--exit-on-lock-contention.
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureBuilt, freePort, killAll, pollUntil, spawnBunlet, waitForHealthz, type BunletProcess } from "../support/binary.ts";
import { canLock } from "../support/lock.ts";

const T = 30_000; // per-test bound; every wait inside is bounded by less

let dir: string;
beforeAll(async () => {
  await ensureBuilt();
}, 120_000);
afterEach(async () => {
  await killAll();
  if (dir) rmSync(dir, { recursive: true, force: true });
});
afterAll(killAll);

function tempDir(): string {
  dir = mkdtempSync(join(tmpdir(), `bunlet-e2e-agent-${process.pid}-`));
  return dir;
}

interface Ports {
  healthz: number;
  main: number;
}

/** Starts an agent on fresh ports with a private root dir; waits until /healthz answers. */
async function startAgent(extra: string[] = [], ports: Ports = { healthz: freePort(), main: freePort() }): Promise<{ p: BunletProcess; ports: Ports }> {
  const root = join(dir, `root-${ports.main}`);
  const p = spawnBunlet([`--root-dir=${root}`, `--healthz-port=${ports.healthz}`, `--port=${ports.main}`, "--read-only-port=0", ...extra]);
  await waitForHealthz(p, `http://127.0.0.1:${ports.healthz}/healthz`);
  return { p, ports };
}

describe("configuration", () => {
  test(
    "/configz shows defaults < config file < flags",
    async () => {
      tempDir();
      const file = join(dir, "kubelet.yaml");
      const filePort = freePort();
      writeFileSync(
        file,
        [
          "apiVersion: kubelet.config.k8s.io/v1beta1",
          "kind: KubeletConfiguration",
          `port: ${filePort}`,
          "syncFrequency: 30s",
          "evictionHard:",
          "  memory.available: 200Mi",
          "evictionPressureTransitionPeriod: 1m",
          "",
        ].join("\n"),
      );
      const { ports } = await startAgent(["--config", file, "--sync-frequency=45s"]);
      const res = await fetch(`http://127.0.0.1:${ports.main}/configz`);
      expect(res.status).toBe(200);
      const { kubeletconfig: c } = (await res.json()) as { kubeletconfig: Record<string, unknown> };
      expect(c.port).toBe(ports.main); // flag beats file
      expect(c.syncFrequency).toBe("45s"); // flag beats file
      expect(c.evictionHard).toEqual({ "memory.available": "200Mi" }); // file
      expect(c.evictionPressureTransitionPeriod).toBe("1m0s"); // file, canonical Go duration
      expect(c.healthzBindAddress).toBe("127.0.0.1"); // default
      expect(c.healthzPort).toBe(ports.healthz);
    },
    T,
  );
});

describe("HTTP endpoints", () => {
  test(
    "healthz, pods, metrics answer; unknown path 404; wrong method 405 with Allow",
    async () => {
      tempDir();
      const { ports } = await startAgent();
      const main = `http://127.0.0.1:${ports.main}`;
      expect(await (await fetch(`${main}/healthz`)).text()).toBe("ok");
      expect(await (await fetch(`${main}/pods`)).json()).toEqual({ kind: "PodList", apiVersion: "v1", metadata: {}, items: [] });
      const metrics = await (await fetch(`${main}/metrics`)).text();
      for (const m of ["process_resident_memory_bytes", "process_cpu_seconds_total", "process_start_time_seconds", "process_open_fds"]) {
        expect(metrics).toMatch(new RegExp(`^# TYPE ${m} `, "m"));
        expect(metrics).toMatch(new RegExp(`^${m} [0-9.e+]+$`, "m"));
      }
      const missing = await fetch(`${main}/does-not-exist`);
      expect(missing.status).toBe(404);
      const wrong = await fetch(`${main}/pods`, { method: "DELETE" });
      expect(wrong.status).toBe(405);
      expect(wrong.headers.get("allow")).toBe("GET, HEAD");
      // The healthz port serves /healthz only.
      expect((await fetch(`http://127.0.0.1:${ports.healthz}/pods`)).status).toBe(404);
      // Still alive after the bad requests.
      expect(await (await fetch(`${main}/healthz`)).text()).toBe("ok");
    },
    T,
  );

  test(
    "the read-only port serves pods but not configz",
    async () => {
      tempDir();
      const ro = freePort();
      await startAgent([`--read-only-port=${ro}`]);
      expect((await fetch(`http://127.0.0.1:${ro}/pods`)).status).toBe(200);
      expect((await fetch(`http://127.0.0.1:${ro}/configz`)).status).toBe(404);
    },
    T,
  );
});

describe("signals", () => {
  test.each(["SIGTERM", "SIGINT"] as const)(
    "%s: exit 0, servers closed, lock released",
    async (signal) => {
      tempDir();
      const lockFile = join(dir, "kubelet.lock");
      const { p, ports } = await startAgent([`--lock-file=${lockFile}`]);
      expect(canLock(lockFile)).toBe(false);
      expect(await p.stop(signal, 5000)).toBe(0);
      expect(canLock(lockFile)).toBe(true);
      expect(fetch(`http://127.0.0.1:${ports.main}/healthz`)).rejects.toThrow();
      expect(p.stdout() + p.stderr()).toContain("Shutdown complete");
    },
    T,
  );
});

describe("--lock-file", () => {
  test(
    "a second instance waits for the lock; with --exit-on-lock-contention the first exits and the second takes over",
    async () => {
      tempDir();
      const lockFile = join(dir, "kubelet.lock");
      const flags = [`--lock-file=${lockFile}`, "--exit-on-lock-contention"];
      const first = await startAgent(flags);

      const second = spawnBunlet([`--root-dir=${join(dir, "root-2")}`, `--healthz-port=${freePort()}`, `--port=${freePort()}`, "--read-only-port=0", ...flags]);
      // The second's open(2) of the lock file is the contention signal: the first exits cleanly…
      expect(await Promise.race([first.p.exited, Bun.sleep(10_000).then(() => "still running")])).toBe(0);
      expect(first.p.stdout() + first.p.stderr()).toContain("Inotify event");
      // …and the second acquires the lock.
      // (Not probed with canLock here: opening the file would be contention for the second one too.)
      await pollUntil(() => (second.stdout() + second.stderr()).includes("Watching for inotify events"), "the second instance to hold the lock and watch it");
      expect(second.proc.exitCode).toBeNull();
      expect(await second.stop("SIGTERM")).toBe(0);
      expect(canLock(lockFile)).toBe(true);
    },
    T,
  );

  test(
    "without --exit-on-lock-contention the second instance blocks until the first stops",
    async () => {
      tempDir();
      const lockFile = join(dir, "kubelet.lock");
      const first = await startAgent([`--lock-file=${lockFile}`]);
      const healthz2 = freePort();
      const second = spawnBunlet([
        `--root-dir=${join(dir, "root-2")}`,
        `--healthz-port=${healthz2}`,
        `--port=${freePort()}`,
        "--read-only-port=0",
        `--lock-file=${lockFile}`,
      ]);
      await pollUntil(() => (second.stdout() + second.stderr()).includes("Waiting for file lock"), "the second instance to wait for the lock");
      expect(second.proc.exitCode).toBeNull();
      expect(await first.p.stop("SIGTERM")).toBe(0);
      await waitForHealthz(second, `http://127.0.0.1:${healthz2}/healthz`);
      // A signal while it is still waiting would also end it cleanly; here it holds the lock.
      expect(await second.stop("SIGTERM")).toBe(0);
    },
    T,
  );

  test(
    "SIGTERM while waiting for the lock exits 0 without taking it",
    async () => {
      tempDir();
      const lockFile = join(dir, "kubelet.lock");
      const first = await startAgent([`--lock-file=${lockFile}`]);
      const second = spawnBunlet([
        `--root-dir=${join(dir, "root-2")}`,
        `--healthz-port=${freePort()}`,
        `--port=${freePort()}`,
        "--read-only-port=0",
        `--lock-file=${lockFile}`,
      ]);
      await pollUntil(() => (second.stdout() + second.stderr()).includes("Waiting for file lock"), "the second instance to wait for the lock");
      expect(await second.stop("SIGTERM")).toBe(0);
      expect(first.p.proc.exitCode).toBeNull(); // the holder is untouched
      expect(await first.p.stop("SIGTERM")).toBe(0);
    },
    T,
  );
});
