// The real kubectl against the node agent through the API-server double's proxy to the kubelet, as
// on a kubeadm cluster: kubectl → kube-apiserver (pods/exec|attach|portforward|log, nodes/proxy) →
// kubelet (TLS, the API server's client certificate checked against clientCAFile) → containerd's
// streaming server. kubectl 1.32 tries WebSocket (v5.channel.k8s.io) first and falls back to SPDY/3.1
// when the runtime refuses it; kubectl 1.27 speaks SPDY only. Needs root and containerd.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { NodeAgent } from "../../../src/agent.ts";
import { createKubeRuntime } from "../../../src/pod/kuberuntime/manager.ts";
import type { ApiServerDouble } from "../../support/apiserver/index.ts";
import { canRunContainerd, type TestContainerd } from "../../support/containerd.ts";
import { clusterPaths, joinDouble, type JoinedNode } from "../../support/cluster.ts";
import { until } from "../../support/wait.ts";

const { node: NODE, base: BASE } = clusterPaths("kstream");
const SDK = "/usr/lib/google-cloud-sdk/bin";
/** kubectl versions to prove against: the default one, and the newest one without WebSocket support. */
const KUBECTLS = ["kubectl", ...(existsSync(`${SDK}/kubectl.1.27`) ? [`${SDK}/kubectl.1.27`] : [])];

describe.skipIf(!canRunContainerd())("kubectl through the API server's proxy to the kubelet", () => {
  let ctd: TestContainerd;
  let api: ApiServerDouble;
  let agent: NodeAgent;
  let c: JoinedNode;
  const admin = join(BASE, "admin.kubeconfig");

  function spawnKubectl(bin: string, args: string[], stdin?: string) {
    return Bun.spawn([bin, "--kubeconfig", admin, ...args], {
      stdin: stdin === undefined ? "ignore" : new Blob([stdin]),
      stdout: "pipe",
      stderr: "pipe",
      env: { ...process.env, HOME: BASE },
    });
  }
  async function kubectl(
    args: string[],
    opts: { bin?: string; stdin?: string; allowFail?: boolean } = {},
  ): Promise<{ out: string; err: string; code: number }> {
    const p = spawnKubectl(opts.bin ?? "kubectl", args, opts.stdin);
    const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
    if (code !== 0 && !opts.allowFail) throw new Error(`${opts.bin ?? "kubectl"} ${args.join(" ")}: exit ${code}: ${err}`);
    return { out, err, code };
  }
  /** Reads a long-running kubectl's stdout until `enough` holds (the process is stopped, by its pid, if it never does). */
  async function waitForOutput(p: ReturnType<typeof spawnKubectl>, enough: (s: string) => boolean, timeoutMs = 60_000): Promise<string> {
    const reader = p.stdout.getReader();
    let got = "";
    const timer = setTimeout(() => p.kill(), timeoutMs);
    try {
      while (!enough(got)) {
        const { value, done } = await reader.read();
        if (value) got += new TextDecoder().decode(value);
        if (done) throw new Error(`kubectl ended (exit ${await p.exited}) after ${JSON.stringify(got)}: ${await new Response(p.stderr).text()}`);
      }
    } finally {
      clearTimeout(timer);
      reader.releaseLock();
    }
    return got;
  }
  async function readUntil(p: ReturnType<typeof spawnKubectl>, enough: (s: string) => boolean): Promise<string> {
    try {
      return await waitForOutput(p, enough);
    } finally {
      p.kill();
      await p.exited;
    }
  }

  beforeAll(async () => {
    c = await joinDouble({
      name: "kstream",
      // Secure serving as on a kubeadm node, on loopback: only the API server's client certificate gets in.
      config: (a) => [
        "address: 127.0.0.1",
        `authentication: { anonymous: { enabled: false }, webhook: { enabled: false }, x509: { clientCAFile: ${a.ca.certFile} } }`,
        "authorization: { mode: AlwaysAllow }",
      ],
      flags: ["--node-ip=127.0.0.1"],
    });
    ({ ctd, api, agent } = c);
    await c.apply(
      "shell.yaml",
      [
        "apiVersion: v1",
        "kind: Pod",
        "metadata: { name: shell, namespace: default }",
        `spec: { nodeName: ${NODE}, terminationGracePeriodSeconds: 1, containers: [{ name: main, image: "${ctd.images.busybox}", command: [sh, -c, "mkdir -p /w && echo hello-pf > /w/index.html && httpd -p 8080 -h /w && i=0 && while true; do echo tick $i; i=$((i+1)); sleep 0.2; done"] }] }`,
      ].join("\n"),
    );
    await until("shell Running in the API", async () => (await api.store.get("pods/default/shell"))?.status?.phase === "Running", 120_000);
  }, 600_000);

  afterAll(async () => {
    const rt = ctd && createKubeRuntime({ cri: ctd.cri, rootDir: join(BASE, "root") });
    await c?.stop(async () => {
      for (const p of (await rt?.getPods(true).catch(() => [])) ?? []) {
        if (p.name !== "shell") continue;
        await rt!.killPod(p, 0).catch(() => {});
        await rt!.removePod(p.uid).catch(() => {});
        await rt!.tearDownVolumes?.(p.uid).catch(() => {});
      }
      // API pods get a projected service-account volume (tmpfs): nothing of ours stays mounted.
      const ours = readFileSync("/proc/self/mounts", "utf8")
        .split("\n")
        .map((l) => l.split(" ")[1] ?? "")
        .filter((m) => m.startsWith(`${BASE}/`));
      for (const m of ours.reverse()) spawnSync("umount", [m]);
    });
  }, 120_000);

  for (const bin of KUBECTLS) {
    const v = bin === "kubectl" ? "kubectl" : bin.slice(SDK.length + 1);
    test(`${v} exec -- sh -c 'echo hi'; the exit code comes back`, async () => {
      const before = api.requests.length;
      expect((await kubectl(["exec", "shell", "--", "sh", "-c", "echo hi; echo to-stderr >&2"], { bin })).out).toBe("hi\n");
      // How it got there: 1.32 asks for WebSocket v5 (containerd offers v4 only), is refused, and falls back to SPDY.
      const upgrades = api.requests
        .slice(before)
        .filter((r) => r.path.includes("/exec?"))
        .map((r) => r.upgrade);
      expect(upgrades.at(-1)).toBe("SPDY/3.1");
      if (bin === "kubectl") expect(upgrades[0]).toMatch(/^websocket .*v5\.channel\.k8s\.io/);
      const failed = await kubectl(["exec", "shell", "--", "sh", "-c", "exit 3"], { bin, allowFail: true });
      expect(failed.code).toBe(3);
      expect(failed.err).toContain("command terminated with exit code 3");
    }, 60_000);

    test(`${v} exec -i: stdin reaches the process`, async () => {
      expect((await kubectl(["exec", "-i", "shell", "--", "sh", "-c", "read line; echo got:$line"], { bin, stdin: "typed\n" })).out).toBe("got:typed\n");
    }, 60_000);

    test(`${v} port-forward: a local port reaches the pod's 8080`, async () => {
      const keep = spawnKubectl(bin, ["port-forward", "pod/shell", ":8080"]);
      try {
        const printed = await waitForOutput(keep, (s) => /Forwarding from 127\.0\.0\.1:\d+ -> 8080/.test(s));
        const local = Number(/Forwarding from 127\.0\.0\.1:(\d+)/.exec(printed)![1]);
        const body = await until(
          "forwarded GET",
          async () => {
            try {
              const r = await fetch(`http://127.0.0.1:${local}/index.html`);
              return r.ok ? await r.text() : undefined;
            } catch {
              return undefined;
            }
          },
          30_000,
        );
        expect(body).toBe("hello-pf\n");
      } finally {
        keep.kill();
        await keep.exited;
      }
    }, 90_000);

    test(`${v} logs -f follows the container`, async () => {
      const got = await readUntil(spawnKubectl(bin, ["logs", "-f", "--tail=1", "shell"]), (s) => s.split("\n").length > 3);
      const nums = got
        .trim()
        .split("\n")
        .map((l) => Number(l.split(" ")[1]));
      expect(nums.slice(1)).toEqual(nums.slice(1).map((_, i) => nums[0]! + i + 1));
    }, 60_000);
  }

  test("kubectl get --raw /api/v1/nodes/<node>/proxy/stats/summary (and /healthz, /pods)", async () => {
    const summary = JSON.parse((await kubectl(["get", "--raw", `/api/v1/nodes/${NODE}/proxy/stats/summary`])).out);
    expect(summary.node.nodeName).toBe(NODE);
    expect(summary.pods.some((p: { podRef: { name: string } }) => p.podRef.name === "shell")).toBe(true);
    expect((await kubectl(["get", "--raw", `/api/v1/nodes/${NODE}/proxy/healthz`])).out).toBe("ok");
    const pods = JSON.parse((await kubectl(["get", "--raw", `/api/v1/nodes/${NODE}/proxy/pods`])).out);
    expect(pods.items.map((p: { metadata: { name: string } }) => p.metadata.name)).toContain("shell");
  }, 60_000);

  test("kubectl exec -it: a terminal in the container (kubectl on a pseudo-terminal from script(1))", async () => {
    const line = `kubectl --kubeconfig ${admin} exec -it shell -- sh -c 'tty; echo done'`;
    const p = Bun.spawn(["script", "-qec", line, "/dev/null"], {
      stdin: "pipe",
      stdout: "pipe",
      stderr: "pipe",
      env: { ...process.env, HOME: BASE, COLUMNS: "100", LINES: "30" },
    });
    const [out, code] = await Promise.all([new Response(p.stdout).text(), p.exited]);
    expect(code).toBe(0);
    expect(out).toMatch(/\/dev\/pts\/\d+\r\ndone\r\n/);
  }, 60_000);

  test("kubectl cp copies a file out of the container (exec + tar)", async () => {
    const dest = join(BASE, "copied.html");
    await kubectl(["cp", "default/shell:/w/index.html", dest]);
    expect(await Bun.file(dest).text()).toBe("hello-pf\n");
  }, 60_000);

  test("kubectl attach streams the main process's output", async () => {
    const got = await readUntil(spawnKubectl("kubectl", ["attach", "shell"]), (s) => (s.match(/tick \d+\n/g) ?? []).length >= 2);
    expect(got).toMatch(/tick \d+\n/);
  }, 60_000);

  test("the kubelet port itself refuses a client without the API server's certificate", async () => {
    const url = agent.servers()!.get("main")!.url;
    const p = Bun.spawn(
      [
        "curl",
        "-sk",
        "-o",
        "/dev/null",
        "-w",
        "%{http_code}",
        "-X",
        "POST",
        "-H",
        "Connection: Upgrade",
        "-H",
        "Upgrade: SPDY/3.1",
        `${url}/exec/default/shell/main?command=id&output=1`,
      ],
      { stdout: "pipe" },
    );
    expect(await new Response(p.stdout).text()).toBe("401");
  });
});
