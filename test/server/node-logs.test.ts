// /logs/ against a file swapped for a link while the request is served (src/server/node-logs.ts):
// the check (realpath inside the directory) and the open must judge the same file. A second process
// keeps replacing /logs/x by a symlink to a secret outside the directory and back, atomically (rename),
// while the handler serves /logs/x: it may answer the file or 404, never the secret.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { nodeLogsHandler } from "../../src/server/node-logs.ts";

describe("/logs/ opens what it checked", () => {
  let dir: string;
  let logDir: string;
  let flipper: ReturnType<typeof Bun.spawn> | undefined;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "bunlet-nodelogs-"));
    logDir = join(dir, "log");
    mkdirSync(logDir);
    writeFileSync(join(dir, "secret"), "TOP SECRET\n");
    writeFileSync(join(logDir, "x"), "public\n");
  });
  afterAll(() => {
    flipper?.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  const get = async (path: string) => {
    const url = new URL(`http://kubelet${path}`);
    const res = await nodeLogsHandler(logDir)(new Request(url), url);
    return { status: res.status, body: await res.text() };
  };

  test("a file swapped for a symlink to a secret between check and open: the file or 404, never the secret", async () => {
    const script = `const fs = require("node:fs"); const d = ${JSON.stringify(logDir)}; const secret = ${JSON.stringify(join(dir, "secret"))};
      for (let i = 0; ; i++) { try { fs.symlinkSync(secret, d + "/l"); fs.renameSync(d + "/l", d + "/x"); fs.writeFileSync(d + "/f", "public\\n"); fs.renameSync(d + "/f", d + "/x"); for (let j = 0; j < 20000; j++); } catch {} }`;
    flipper = Bun.spawn([process.execPath, "-e", script], { stdout: "ignore", stderr: "ignore" });
    const seen = { public: 0, notFound: 0, secret: 0, other: 0 };
    const others: string[] = [];
    for (let i = 0; i < 2000; i++) {
      const r = await get("/logs/x");
      if (r.body.includes("SECRET")) seen.secret++;
      else if (r.status === 200 && r.body === "public\n") seen.public++;
      else if (r.status === 404) seen.notFound++;
      else seen.other++, others.push(`${r.status} ${JSON.stringify(r.body.slice(0, 40))}`);
    }
    flipper.kill();
    expect(others.slice(0, 5)).toEqual([]);
    expect({ ...seen, public: seen.public > 0 }).toEqual({ public: true, notFound: seen.notFound, secret: 0, other: 0 });
  }, 60_000);

  test("a FIFO is refused without waiting for a writer", async () => {
    const fifo = join(logDir, "pipe");
    expect(Bun.spawnSync(["mkfifo", fifo]).exitCode).toBe(0);
    const r = await Promise.race([get("/logs/pipe"), Bun.sleep(3000).then(() => ({ status: -1, body: "blocked" }))]);
    expect(r.status).toBe(404);
  });
});
