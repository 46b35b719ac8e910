// Where the API client could leak a credential: a redirect (the token and client certificate would go
// wherever it points: bunlet does not follow, a 3xx is an error), a body that is not JSON (Bun's
// parser quotes the token it choked on), and the exec credential plugin (bounded in time and stdout;
// its stderr and stdout never reach an error message).
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { realClock } from "../../src/clock.ts";
import { parseDockerConfigJson } from "../../src/credentialprovider/dockerconfig.ts";
import { parseJsonRedacted } from "../../src/json-redacted.ts";
import { ApiError, createKubeClient } from "../../src/kube/index.ts";
import { runExecPlugin } from "../../src/kube/exec-credential.ts";

const SECRET = "s3cr3t-token-value";
const dir = mkdtempSync(join(tmpdir(), `bunlet-credleak-${process.pid}-`));
const elsewhereSeen: string[] = [];
const elsewhere = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  fetch: (req) => (elsewhereSeen.push(req.headers.get("authorization") ?? ""), new Response("{}")),
});
const api = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  fetch(req) {
    const path = new URL(req.url).pathname;
    if (path === "/redirect") return new Response(null, { status: 307, headers: { location: `http://127.0.0.1:${elsewhere.port}/steal` } });
    if (path === "/secret-garbled") return new Response(`{"data":{"token": ${SECRET}}}`, { headers: { "content-type": "application/json" } });
    return new Response("{}");
  },
});
afterAll(() => {
  api.stop(true);
  elsewhere.stop(true);
  rmSync(dir, { recursive: true, force: true });
});
const client = () => createKubeClient({ server: `http://127.0.0.1:${api.port}`, source: "test", token: SECRET }, { clock: realClock });

describe("API client", () => {
  test("a redirect is not followed: the token never reaches the other host, the 3xx is an ApiError", async () => {
    const e = await client()
      .request({ path: "/redirect" })
      .catch((x) => x);
    expect(e).toBeInstanceOf(ApiError);
    expect((e as ApiError).code).toBe(307);
    expect(elsewhereSeen).toEqual([]);
  });

  test("a body that is not JSON: the error names the request, not the content", async () => {
    const e = (await client()
      .request({ path: "/secret-garbled" })
      .catch((x) => x)) as Error;
    expect(e.message).toMatch(/^response of GET \/secret-garbled: not valid JSON/);
    expect(e.message).not.toContain(SECRET);
  });

  test("parseJsonRedacted and docker configs never quote their input", () => {
    expect(() => parseJsonRedacted(`{"a": ${SECRET}}`, "x")).toThrow(/^x: not valid JSON \(\d+ bytes/);
    const e = (() => {
      try {
        parseDockerConfigJson(`{"auths": {"r": {"auth": ${SECRET}}}}`, "secret default/pull");
      } catch (x) {
        return x as Error;
      }
    })();
    expect(e?.message).toMatch(/^secret default\/pull: not valid JSON/);
    expect(e?.message).not.toContain(SECRET);
  });
});

function plugin(name: string, body: string): string {
  const p = join(dir, name);
  writeFileSync(p, `#!/bin/sh\n${body}\n`);
  chmodSync(p, 0o755);
  return p;
}
const execConfig = (command: string) => ({ command, apiVersion: "client.authentication.k8s.io/v1", args: [] as string[] }) as never;
const cluster = { server: "https://x" };

describe("exec credential plugin", () => {
  test("a failing plugin's stderr is not copied into the error", async () => {
    const e = (await runExecPlugin(execConfig(plugin("fail.sh", `echo "token=${SECRET}" >&2; exit 3`)), cluster).catch((x) => x)) as Error;
    expect(e.message).toMatch(/failed with exit code 3 \(stderr: \d+ bytes, not shown/);
    expect(e.message).not.toContain(SECRET);
  });

  test("stdout that is not JSON is refused without quoting it", async () => {
    const e = (await runExecPlugin(execConfig(plugin("garbled.sh", `echo '{"status": {"token": ${SECRET}}}'`)), cluster).catch((x) => x)) as Error;
    expect(e.message).toMatch(/not valid JSON/);
    expect(e.message).not.toContain(SECRET);
  });

  test("a plugin that hangs is killed at the timeout", async () => {
    const started = Date.now();
    const e = (await runExecPlugin(execConfig(plugin("hang.sh", "exec sleep 30")), cluster, { timeoutMs: 300 }).catch((x) => x)) as Error;
    expect(e.message).toMatch(/did not finish within 300 ms and was killed/);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  test("a plugin printing without end is killed past the stdout cap", async () => {
    const e = (await runExecPlugin(execConfig(plugin("flood.sh", "exec yes")), cluster, { maxStdoutBytes: 64 * 1024, timeoutMs: 20_000 }).catch(
      (x) => x,
    )) as Error;
    expect(e.message).toMatch(/printed more than 65536 bytes and was killed/);
  });

  test("a good plugin still works", async () => {
    const out = JSON.stringify({ apiVersion: "client.authentication.k8s.io/v1", kind: "ExecCredential", status: { token: "t" } });
    expect(await runExecPlugin(execConfig(plugin("ok.sh", `echo '${out}'`)), cluster)).toEqual({ token: "t" });
  });
});
