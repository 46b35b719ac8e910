// exec, attach, port-forward and run on the whole node agent against a private containerd, with
// WebSocket clients speaking the channel protocols containerd's streaming server offers
// (v4.channel.k8s.io): the kubelet fetches the runtime's URL through the CRI and splices the
// upgraded connection onto it. (SPDY through kubectl: kubectl-streaming.test.ts.)
// Skipped when containerd cannot run here (not root).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Pod } from "../../../src/pod/types.ts";
import { canRunContainerd } from "../../support/containerd.ts";
import { startStandaloneNode, type StandaloneNode } from "../../support/standalone.ts";
import { until } from "../../support/wait.ts";

const PID = process.pid;
const CGROUP_ROOT = `/bunlet-stream-${PID}`;
const BASE = `/tmp/bunlet-stream-${PID}`;
const NODE = "streamtest";

/** The v4.channel.k8s.io protocol: each binary message is one channel byte + data; channel 3 carries the final Status. */
async function wsSession(
  url: string,
  opts: { send?: Uint8Array[]; stopWhen?: (out: Record<number, string>) => boolean; protocol?: string } = {},
): Promise<Record<number, string>> {
  const ws = new WebSocket(url, [opts.protocol ?? "v4.channel.k8s.io"]);
  ws.binaryType = "arraybuffer";
  const out: Record<number, string> = {};
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => (ws.close(), reject(new Error(`timeout: ${JSON.stringify(out)}`))), 30_000);
    const finish = () => (clearTimeout(timer), resolve(out));
    ws.onopen = () => {
      for (const m of opts.send ?? []) ws.send(m);
    };
    ws.onmessage = (e) => {
      const b = new Uint8Array(e.data as ArrayBuffer);
      if (b.length === 0) return;
      out[b[0]!] = (out[b[0]!] ?? "") + Buffer.from(b.subarray(1)).toString("latin1");
      if (opts.stopWhen?.(out)) {
        ws.close();
        finish();
      }
    };
    ws.onerror = (e) => (clearTimeout(timer), reject(new Error(`websocket error: ${(e as ErrorEvent).message ?? e.type}`)));
    ws.onclose = finish;
  });
}

const channel = (n: number, data: string | Uint8Array) => new Uint8Array([n, ...(typeof data === "string" ? Buffer.from(data) : data)]);

describe.skipIf(!canRunContainerd())("streaming endpoints on containerd", () => {
  let node: StandaloneNode;
  let base: string;
  let pod: Pod;

  const shellPod = (image: string) => `apiVersion: v1
kind: Pod
metadata: { name: shell }
spec:
  terminationGracePeriodSeconds: 1
  containers:
    - name: web
      image: ${image}
      command: [sh, -c, "mkdir -p /w && echo hello-pf > /w/index.html && exec httpd -f -p 8080 -h /w"]
    - name: talker
      image: ${image}
      command: [sh, -c, "i=0; while true; do echo tick $i; i=$((i+1)); sleep 0.2; done"]
`;

  beforeAll(async () => {
    node = await startStandaloneNode({
      base: BASE,
      cgroupRoot: CGROUP_ROOT,
      node: NODE,
      // Standalone, plain loopback: the handlers under test are opted in.
      flags: ["--unsafe-loopback-debug-handlers"],
      prepare: ({ ctd, manifests }) => writeFileSync(join(manifests, "shell.yaml"), shellPod(ctd.images.busybox)),
    });
    base = node.url;
    pod = await until(
      "shell Running",
      async () => {
        const items = ((await (await fetch(`${base}/pods`)).json()) as { items: Pod[] }).items;
        const p = items.find((x) => x.metadata.name === `shell-${NODE}`);
        return p?.status?.phase === "Running" && p.status.containerStatuses?.every((c) => c.ready) ? p : undefined;
      },
      120_000,
    );
  }, 600_000);

  afterAll(async () => {
    await node?.stop();
  }, 120_000);

  const ws = () => base.replace(/^http/, "ws");
  const path = (kind: string, container = "") => `${kind}/default/${pod.metadata.name}${container ? `/${container}` : ""}`;

  test("exec over WebSocket: stdout and stderr on their channels, the exit status on channel 3", async () => {
    const cmd = ["sh", "-c", "echo out; echo err >&2; exit 3"].map((c) => `command=${encodeURIComponent(c)}`).join("&");
    const out = await wsSession(`${ws()}/${path("exec", "web")}?${cmd}&output=1&error=1`);
    expect(out[1]).toBe("out\n");
    expect(out[2]).toBe("err\n");
    const status = JSON.parse(out[3]!);
    expect(status).toMatchObject({ status: "Failure", reason: "NonZeroExitCode", details: { causes: [{ reason: "ExitCode", message: "3" }] } });
  });

  test("exec with stdin: what is written reaches the process", async () => {
    const out = await wsSession(`${ws()}/${path("exec", "web")}?command=head&command=-n1&input=1&output=1`, { send: [channel(0, "typed line\n")] });
    expect(out[1]).toBe("typed line\n");
    expect(JSON.parse(out[3]!).status).toBe("Success");
  });

  test("exec with a TTY: the process has a terminal, a resize on channel 4 reaches it", async () => {
    const resize = channel(4, JSON.stringify({ Width: 132, Height: 43 }));
    // Polls for the new size inside the container (the resize and the exec start race), then reports.
    const cmd = ["sh", "-c", 'until [ "$(stty size 2>/dev/null)" = "43 132" ]; do sleep 0.05; done; tty; stty size']
      .map((c) => `command=${encodeURIComponent(c)}`)
      .join("&");
    const out = await wsSession(`${ws()}/${path("exec", "web")}?${cmd}&input=1&output=1&tty=1`, { send: [resize] });
    expect(out[1]).toMatch(/^\/dev\/pts\/\d+\r\n43 132\r\n$/);
    expect(out[2]).toBeUndefined();
  });

  test("attach: the main process's output streams", async () => {
    const out = await wsSession(`${ws()}/${path("attach", "talker")}?output=1`, { stopWhen: (o) => (o[1] ?? "").split("\n").length > 3 });
    expect(out[1]).toMatch(/^(tick \d+\n)+/);
  });

  test("port-forward over WebSocket: an HTTP request to the pod's port 8080", async () => {
    // Per port: a data channel (0) and an error channel (1); each starts with the port, little-endian.
    const req = "GET /index.html HTTP/1.0\r\n\r\n";
    const out = await wsSession(`${ws()}/${path("portForward")}?port=8080`, { send: [channel(0, req)], stopWhen: (o) => (o[0] ?? "").includes("hello-pf") });
    expect(out[0]).toContain("hello-pf");
  });

  test("/run returns the command's output", async () => {
    const r = await fetch(`${base}/${path("run", "web")}?cmd=cat%20/w/index.html`, { method: "POST" });
    expect([r.status, await r.text()]).toEqual([200, "hello-pf\n"]);
  });

  test("unknown pod → 404, unknown container → 500 as upstream, plain GET → Upgrade request required", async () => {
    const noPod = await fetch(`${base}/exec/default/nope/web?command=ls&output=1`);
    expect([noPod.status, await noPod.text()]).toEqual([404, "pod does not exist"]);
    const noContainer = await fetch(`${base}/${path("exec", "nope")}?command=ls&output=1`);
    expect([noContainer.status, await noContainer.text()]).toEqual([500, `container not found ("nope")`]);
    const plain = await fetch(`${base}/${path("exec", "web")}?command=ls&output=1`);
    expect([plain.status, await plain.text()]).toEqual([500, "Upgrade request required"]);
  });
});
