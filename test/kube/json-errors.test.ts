// Malformed JSON that may carry secrets (an API response with a Secret or a token, a watch event, an
// exec plugin's output, a .dockerconfigjson): the error — which is logged, and may become an event —
// names the document, never its content (src/json-redacted.ts). The engine's own message would quote it:
// 'JSON Parse error: Unexpected identifier "s3cr3t…"'.
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { realClock } from "../../src/clock.ts";
import { createKubeClient, watchEvents } from "../../src/kube/index.ts";
import { runExecPlugin } from "../../src/kube/exec-credential.ts";
import { parseDockerConfigJson } from "../../src/credentialprovider/dockerconfig.ts";

const SECRET = "s3cr3tTokenValue";
const server = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  fetch: (req) =>
    new URL(req.url).searchParams.get("watch")
      ? new Response(`{"type":"ADDED","object":{"data":{"password":${SECRET}}}}\n`, { headers: { "content-type": "application/json" } })
      : new Response(`{"kind":"Secret","data":{"token":${SECRET}}}`, { headers: { "content-type": "application/json" } }),
});
const dir = mkdtempSync(join(tmpdir(), "bunlet-json-errors-"));
afterAll(() => {
  server.stop(true);
  rmSync(dir, { recursive: true, force: true });
});
const client = createKubeClient({ server: `http://127.0.0.1:${server.port}`, source: "test" }, { clock: realClock });
const message = async (p: Promise<unknown> | (() => unknown)) => {
  try {
    await (typeof p === "function" ? p() : p);
  } catch (e) {
    return (e as Error).message;
  }
  return "no error";
};

describe("JSON parse errors never quote the document", () => {
  test("an API response (a Secret)", async () => {
    const m = await message(client.request({ path: "/api/v1/namespaces/default/secrets/s" }));
    expect(m).toContain("response of GET /api/v1/namespaces/default/secrets/s: not valid JSON");
    expect(m).not.toContain(SECRET);
  });

  test("a watch event", async () => {
    const m = await message(async () => {
      for await (const _ of watchEvents(client, "/api/v1/secrets", { watch: "true" })) break;
    });
    expect(m).toContain("watch event of /api/v1/secrets: not valid JSON");
    expect(m).not.toContain(SECRET);
  });

  test("an exec credential plugin's output", async () => {
    const plugin = join(dir, "plugin.sh");
    writeFileSync(plugin, `#!/bin/sh\necho '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":${SECRET}}}'\n`);
    chmodSync(plugin, 0o755);
    const m = await message(runExecPlugin({ command: plugin, apiVersion: "client.authentication.k8s.io/v1" } as never, { server: "https://x" }));
    expect(m).toContain("not valid JSON");
    expect(m).not.toContain(SECRET);
  });

  test("a .dockerconfigjson", async () => {
    const m = await message(() => parseDockerConfigJson(`{"auths":{"r.example":{"password":${SECRET}}}}`));
    expect(m).toContain(".dockerconfigjson: not valid JSON");
    expect(m).not.toContain(SECRET);
  });
});
