// kubectl's streaming commands through a real kube-apiserver (test/support/upstream) to the node agent,
// as on a kubeadm cluster: kubectl → kube-apiserver (pods/exec|attach|portforward|log) → kubelet port
// (TLS, the API server's client certificate checked against clientCAFile, authorized by a
// SubjectAccessReview to the API server) → containerd's streaming server. The release's kubectl (1.37)
// speaks WebSocket to the API server, which turns it into SPDY towards the node; kubectl 1.27 speaks SPDY
// through it. The node's own endpoints (/stats/summary, /healthz, /pods) are asked as the API server asks
// them: kube-apiserver refuses nodes/proxy to a loopback node address ("address not allowed"), and this
// test bed's node is on loopback. Needs root, containerd and the upstream binaries.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { canRunContainerd } from "../../support/containerd.ts";
import { NODE_NAME, startUpstreamCluster, upstreamBinDir, type UpstreamCluster } from "../../support/upstream/index.ts";
import { until } from "../../support/wait.ts";

const SDK = "/usr/lib/google-cloud-sdk/bin";
const bin = upstreamBinDir();
if (!bin.dir) console.warn(`skipping the kubectl streaming tests: ${bin.why}`);
/** kubectl versions to prove against: the release's, and the newest one without WebSocket support. */
const KUBECTLS = bin.dir ? [join(bin.dir, "kubectl"), ...(existsSync(`${SDK}/kubectl.1.27`) ? [`${SDK}/kubectl.1.27`] : [])] : [];

const SHELL = [
  "apiVersion: v1",
  "kind: Pod",
  "metadata: { name: shell, namespace: default }",
  `spec: { nodeName: ${NODE_NAME}, terminationGracePeriodSeconds: 1, containers: [{ name: main, image: "IMAGE", command: [sh, -c, "mkdir -p /w && echo hello-pf > /w/index.html && httpd -p 8080 -h /w && i=0 && while true; do echo tick $i; i=$((i+1)); sleep 0.2; done"] }] }`,
].join("\n");

describe.skipIf(!canRunContainerd() || !bin.dir)("kubectl through a real API server to the kubelet", () => {
  let c: UpstreamCluster;

  function spawnKubectl(kubectl: string, args: string[], stdin?: string) {
    return Bun.spawn([kubectl, ...args], {
      stdin: stdin === undefined ? "ignore" : new Blob([stdin]),
      stdout: "pipe",
      stderr: "pipe",
      env: { ...process.env, KUBECONFIG: c.cp.admin, HOME: c.cp.dir },
    });
  }
  async function kubectl(
    kubectl: string,
    args: string[],
    opts: { stdin?: string; allowFail?: boolean } = {},
  ): Promise<{ out: string; err: string; code: number }> {
    const p = spawnKubectl(kubectl, args, opts.stdin);
    const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
    if (code !== 0 && !opts.allowFail) throw new Error(`${kubectl} ${args.join(" ")}: exit ${code}: ${err}`);
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
    c = await startUpstreamCluster({ name: "kstream", binDir: bin.dir! });
    await c.cp.kubectlIn(SHELL.replace("IMAGE", c.n.ctd.images.busybox), "apply", "-f", "-");
    await c.podInPhase("shell", "Running", 120_000);
  }, 300_000);

  afterAll(async () => {
    await c?.stop();
  }, 120_000);

  for (const k of KUBECTLS) {
    const v = k.startsWith(SDK) ? k.slice(SDK.length + 1) : "kubectl 1.37";
    test(`${v} exec -- sh -c 'echo hi'; the exit code comes back`, async () => {
      expect((await kubectl(k, ["exec", "shell", "--", "sh", "-c", "echo hi; echo to-stderr >&2"])).out).toBe("hi\n");
      const failed = await kubectl(k, ["exec", "shell", "--", "sh", "-c", "exit 3"], { allowFail: true });
      expect(failed.code).toBe(3);
      expect(failed.err).toContain("command terminated with exit code 3");
    }, 60_000);

    test(`${v} exec -i: stdin reaches the process`, async () => {
      expect((await kubectl(k, ["exec", "-i", "shell", "--", "sh", "-c", "read line; echo got:$line"], { stdin: "typed\n" })).out).toBe("got:typed\n");
    }, 60_000);

    test(`${v} port-forward: a local port reaches the pod's 8080`, async () => {
      const keep = spawnKubectl(k, ["port-forward", "pod/shell", ":8080"]);
      try {
        const printed = await waitForOutput(keep, (s) => /Forwarding from 127\.0\.0\.1:\d+ -> 8080/.test(s));
        const local = Number(/Forwarding from 127\.0\.0\.1:(\d+)/.exec(printed)![1]);
        const body = await until(
          "forwarded GET",
          () =>
            fetch(`http://127.0.0.1:${local}/index.html`).then(
              (r) => (r.ok ? r.text() : undefined),
              () => undefined,
            ),
          30_000,
        );
        expect(body).toBe("hello-pf\n");
      } finally {
        keep.kill();
        await keep.exited;
      }
    }, 90_000);

    test(`${v} logs -f follows the container`, async () => {
      const got = await readUntil(spawnKubectl(k, ["logs", "-f", "--tail=1", "shell"]), (s) => s.split("\n").length > 3);
      const nums = got
        .trim()
        .split("\n")
        .map((l) => Number(l.split(" ")[1]));
      expect(nums.slice(1)).toEqual(nums.slice(1).map((_, i) => nums[0]! + i + 1));
    }, 60_000);
  }

  test("the node's /stats/summary, /healthz and /pods, asked with the API server's client certificate", async () => {
    const summary = await (await c.nodeRequest("/stats/summary")).json();
    expect(summary.node.nodeName).toBe(NODE_NAME);
    expect(summary.pods.some((p: { podRef: { name: string } }) => p.podRef.name === "shell")).toBe(true);
    expect(await (await c.nodeRequest("/healthz")).text()).toBe("ok");
    const pods = await (await c.nodeRequest("/pods")).json();
    expect(pods.items.map((p: { metadata: { name: string } }) => p.metadata.name)).toContain("shell");
  }, 60_000);

  test("kubectl exec -it: a terminal in the container (kubectl on a pseudo-terminal from script(1))", async () => {
    const line = `${c.cp.kubectlBinary} --kubeconfig ${c.cp.admin} exec -it shell -- sh -c 'tty; echo done'`;
    const p = Bun.spawn(["script", "-qec", line, "/dev/null"], {
      stdin: "pipe",
      stdout: "pipe",
      stderr: "pipe",
      env: { ...process.env, HOME: c.cp.dir, COLUMNS: "100", LINES: "30" },
    });
    const [out, code] = await Promise.all([new Response(p.stdout).text(), p.exited]);
    expect(code).toBe(0);
    expect(out).toMatch(/\/dev\/pts\/\d+\r\ndone\r\n/);
  }, 60_000);

  test("kubectl cp copies a file out of the container (exec + tar)", async () => {
    const dest = join(c.cp.dir, "copied.html");
    await c.cp.kubectl("cp", "default/shell:/w/index.html", dest);
    expect(await Bun.file(dest).text()).toBe("hello-pf\n");
  }, 60_000);

  test("kubectl attach streams the main process's output", async () => {
    const got = await readUntil(spawnKubectl(c.cp.kubectlBinary, ["attach", "shell"]), (s) => (s.match(/tick \d+\n/g) ?? []).length >= 2);
    expect(got).toMatch(/tick \d+\n/);
  }, 60_000);

  test("the kubelet port itself refuses a client without the API server's certificate", async () => {
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
        `https://127.0.0.1:${c.n.port}/exec/default/shell/main?command=id&output=1`,
      ],
      { stdout: "pipe" },
    );
    expect(await new Response(p.stdout).text()).toBe("401");
  });
});
