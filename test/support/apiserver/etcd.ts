// A private etcd for the API-server double, as kube-apiserver has one: Debian's etcd-server (3.4,
// installed by scripts/host/setup.sh), on 127.0.0.1 with free ports and a temp data dir, stopped
// and removed by stop(). The double talks to it through etcd's JSON gRPC gateway (/v3/kv/…,
// /v3/watch), so resourceVersions, compare-and-swap, watch-from-revision and compaction are etcd's.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../binary.ts";

export interface Etcd {
  /** http://127.0.0.1:<port> */
  url: string;
  stop(): Promise<void>;
}

export const etcdAvailable = (): boolean => Bun.which("etcd") !== null;

/**
 * etcd on two free ports. A port probed free can still be taken by another process before etcd
 * binds it; etcd then exits at once with "address already in use" and is started again on new ports.
 */
export async function startEtcd(): Promise<Etcd> {
  if (!etcdAvailable()) throw new Error("etcd is not installed: run scripts/host/setup.sh (Debian package etcd-server)");
  for (let attempt = 1; ; attempt++) {
    try {
      return await startEtcdOnce();
    } catch (e) {
      if (attempt >= 3 || !String((e as Error).message).includes("address already in use")) throw e;
    }
  }
}

/** A one-member etcd on 127.0.0.1 with the given ports: its command line. */
export function etcdArgs(o: { name: string; dataDir: string; client: number; peer: number; logLevel: "error" | "warn" }): string[] {
  const url = `http://127.0.0.1:${o.client}`;
  const peerUrl = `http://127.0.0.1:${o.peer}`;
  return [
    ...["etcd", "--name", o.name, "--data-dir", o.dataDir, "--listen-client-urls", url, "--advertise-client-urls", url],
    ...["--listen-peer-urls", peerUrl, "--initial-advertise-peer-urls", peerUrl, "--initial-cluster", `${o.name}=${peerUrl}`],
    ...["--log-level", o.logLevel, "--logger", "zap"],
  ];
}

async function startEtcdOnce(): Promise<Etcd> {
  const dir = await mkdtemp(join(tmpdir(), "bunlet-etcd-"));
  const [client, peer] = [freePort(), freePort()];
  const url = `http://127.0.0.1:${client}`;
  const proc = Bun.spawn(etcdArgs({ name: "double", dataDir: join(dir, "data"), client, peer, logLevel: "error" }), { stdout: "ignore", stderr: "pipe" });
  const stop = async () => {
    proc.kill("SIGTERM");
    const t = setTimeout(() => proc.kill("SIGKILL"), 5000);
    await proc.exited;
    clearTimeout(t);
    await rm(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 15_000;
  for (;;) {
    const ok = await fetch(`${url}/health`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return { url, stop };
    if (proc.exitCode !== null || Date.now() > deadline) {
      const err = await new Response(proc.stderr).text().catch(() => "");
      await stop();
      throw new Error(`etcd did not become healthy on ${url}: ${err.slice(-2000)}`);
    }
    await Bun.sleep(20);
  }
}
