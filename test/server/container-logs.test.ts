import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { containerLogsHandler, decodeCriLine, parseLogOptions } from "../../src/server/container-logs.ts";
import { kubeletRoutes } from "../../src/server/endpoints.ts";
import { createRegistry } from "../../src/server/metrics.ts";
import { createRouter } from "../../src/server/router.ts";
import { startServers, type RunningServers } from "../../src/server/listen.ts";

describe("CRI log lines and PodLogOptions", () => {
  test.each([
    ["2026-12-01T08:00:00.123456789Z stdout F hello world", { stream: "stdout", partial: false, content: "hello world" }],
    ["2026-12-01T08:00:00Z stderr P part", { stream: "stderr", partial: true, content: "part" }],
    ["2026-12-01T08:00:00Z stdout F ", { content: "" }],
    ["2026-12-01T08:00:00Z stdout F", { content: "" }],
  ])("%j", (line, want) => expect(decodeCriLine(line)).toMatchObject(want));
  test.each(["garbage", "notatime stdout F x", "2026-12-01T08:00:00Z stdin F x"])("%j is not a CRI line", (l) => expect(decodeCriLine(l)).toBeUndefined());

  test.each([
    ["tailLines=-1", 422, "tailLines: Invalid value: -1: must be greater than or equal to 0"],
    ["tailLines=x", 400, 'tailLines: Invalid value: "x": must be an integer'],
    ["limitBytes=0", 422, "limitBytes: Invalid value: 0: must be greater than 0"],
    ["sinceSeconds=0", 422, "sinceSeconds: Invalid value: 0: must be greater than 0"],
    ["sinceSeconds=5&sinceTime=2026-12-01T08:00:00Z", 422, "sinceSeconds: Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified"],
    ["sinceTime=yesterday", 400, 'sinceTime: Invalid value: "yesterday": must be RFC3339'],
  ])("%s → %d", (q, status, message) => expect(parseLogOptions(new URLSearchParams(q), 0)).toEqual({ status, message }));
});

describe("/containerLogs over HTTP", () => {
  let dir: string;
  let server: ReturnType<typeof Bun.serve>;
  let logDir: string;
  const pods = [{ metadata: { namespace: "default", name: "web", uid: "u1" }, spec: { containers: [{ name: "app" }] } }];
  const line = (t: string, s: string, tag: string, c: string) => `2026-12-01T08:00:${t}Z ${s} ${tag} ${c}\n`;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "bunlet-clogs-"));
    logDir = join(dir, "default_web_u1", "app");
    mkdirSync(logDir, { recursive: true });
    writeFileSync(join(logDir, "0.log"), line("00.0", "stdout", "F", "old run"));
    writeFileSync(
      join(logDir, "1.log"),
      line("01.0", "stdout", "F", "one") + line("02.0", "stderr", "P", "two-") + line("02.5", "stderr", "F", "b") + line("03.0", "stdout", "F", "three"),
    );
    const fetch = createRouter(kubeletRoutes({ getPods: () => pods, metrics: createRegistry(), podLogsDir: dir }, { debuggingHandlers: true }));
    server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch });
  });
  afterAll(() => {
    server.stop(true);
    rmSync(dir, { recursive: true, force: true });
  });
  const get = async (q: string) => {
    const r = await fetch(`http://127.0.0.1:${server.port}/containerLogs/${q}`);
    return { status: r.status, body: await r.text() };
  };

  test.each([
    ["default/web/app", 200, "one\ntwo-b\nthree\n"],
    ["default/web/app?tailLines=1", 200, "three\n"],
    ["default/web/app?tailLines=0", 200, ""],
    ["default/web/app?limitBytes=6", 200, "one\ntw"],
    ["default/web/app?sinceTime=2026-12-01T08:00:02.5Z", 200, "b\nthree\n"],
    ["default/web/app?timestamps=true&tailLines=1", 200, "2026-12-01T08:00:03.0Z three\n"],
    ["default/web/app?previous=true", 200, "old run\n"],
    ["default/nope/app", 404, 'pod "nope" does not exist\n'],
    ["default/web/nope", 404, 'container "nope" not found in pod "web"\n'],
    ["default/web", 400, "missing container name\n"],
  ])("%s → %d", async (q, status, body) => {
    expect(await get(q)).toEqual({ status, body });
  });

  test("follow streams appended lines and survives a rotation (rename + new file)", async () => {
    const res = await fetch(`http://127.0.0.1:${server.port}/containerLogs/default/web/app?follow=true&tailLines=1`);
    const reader = res.body!.getReader();
    const dec = new TextDecoder();
    let got = "";
    const readUntil = async (want: string) => {
      while (!got.includes(want)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`stream ended before ${JSON.stringify(want)}; got ${JSON.stringify(got)}`);
        got += dec.decode(value);
      }
    };
    await readUntil("three\n");
    const current = join(logDir, "1.log");
    appendFileSync(current, line("04.0", "stdout", "F", "four"));
    await readUntil("four\n");
    // Rotation as the container log manager does it: the last line lands in the old file, then a new file.
    appendFileSync(current, line("05.0", "stdout", "F", "five"));
    renameSync(current, `${current}.20261201-080005`);
    writeFileSync(current, line("06.0", "stdout", "F", "six"));
    await readUntil("six\n");
    await reader.cancel();
    expect(got).toBe("three\nfour\nfive\nsix\n");
  });
});

describe("/containerLogs reads a block at a time (container-log-reader.ts)", () => {
  let dir: string;
  const pods = [{ metadata: { namespace: "default", name: "big", uid: "u2" }, spec: { containers: [{ name: "app" }, { name: "odd" }] } }];
  const rchar = () => Number(/^rchar: (\d+)$/m.exec(readFileSync("/proc/self/io", "utf8"))![1]);
  const line = (i: number) => `2026-12-01T08:00:00.${String(i % 1000).padStart(3, "0")}Z stdout F line ${i} ${"x".repeat(80)}\n`;
  let bigBytes = 0;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "bunlet-clogs-big-"));
    const app = join(dir, "default_big_u2", "app");
    mkdirSync(app, { recursive: true });
    // ~48 MiB of log: reading it whole for one line is what must not happen.
    const chunk = Array.from({ length: 10_000 }, (_, i) => line(i)).join("");
    for (let i = 0; i < 48; i++) appendFileSync(join(app, "0.log"), chunk);
    appendFileSync(join(app, "0.log"), line(999_999));
    bigBytes = statSync(join(app, "0.log")).size;
    const odd = join(dir, "default_big_u2", "odd");
    mkdirSync(odd, { recursive: true });
    // A multi-byte character across the first 64 KiB block boundary, and an incomplete last line.
    const pad = 65_536 - "2026-12-01T08:00:00Z stdout F ".length - 1;
    writeFileSync(join(odd, "0.log"), `2026-12-01T08:00:00Z stdout F ${"a".repeat(pad)}é\n2026-12-01T08:00:01Z stdout F no newline yet`);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const handler = (maxFollowMs?: number) => containerLogsHandler({ getPods: () => pods, podLogsDir: dir, maxFollowMs });
  const get = async (q: string, maxFollowMs?: number) => {
    const url = new URL(`http://kubelet/containerLogs/default/big/${q}`);
    const res = await handler(maxFollowMs)(new Request(url), url);
    return res.text();
  };

  test("tailLines=1 of a 48 MiB file reads its end, not the file", async () => {
    expect(bigBytes).toBeGreaterThan(40 << 20);
    const before = rchar();
    expect(await get("app?tailLines=1")).toBe(`line 999999 ${"x".repeat(80)}\n`);
    expect(rchar() - before).toBeLessThan(1 << 20);
  });

  test("limitBytes=100 stops reading once 100 bytes are out", async () => {
    const before = rchar();
    const body = await get("app?limitBytes=100");
    expect(body).toBe(`line 0 ${"x".repeat(80)}\nline 1 ${"x".repeat(80)}\n`.slice(0, 100));
    expect(rchar() - before).toBeLessThan(1 << 20);
  });

  test("a character split across blocks stays whole; an incomplete last line is written when not following (upstream)", async () => {
    const body = await get("odd");
    expect(body.endsWith("aé\nno newline yet\n")).toBe(true);
    expect(body).not.toContain("\uFFFD");
  });

  test("a follow ends by itself after maxFollowMs (upstream's 4 h WriteTimeout)", async () => {
    const url = new URL("http://kubelet/containerLogs/default/big/odd?follow=true&tailLines=0");
    const res = await handler(300)(new Request(url), url);
    const reader = res.body!.getReader();
    const ended = (async () => {
      for (;;) if ((await reader.read()).done) return "ended";
    })();
    expect(await Promise.race([ended, Bun.sleep(5000).then(() => "still following after 5 s")])).toBe("ended");
  });
});

describe("logs -f on the main port", () => {
  let dir: string;
  let running: RunningServers | undefined;
  afterAll(async () => {
    await running?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test("a follow of a container quiet for longer than an idle timeout (Bun.serve cuts at 10-12 s) is not cut", async () => {
    dir = mkdtempSync(join(tmpdir(), "bunlet-clogs-quiet-"));
    const logs = join(dir, "default_quiet_u3", "app");
    mkdirSync(logs, { recursive: true });
    writeFileSync(join(logs, "0.log"), "2026-12-01T08:00:00Z stdout F first\n");
    const pods = [{ metadata: { namespace: "default", name: "quiet", uid: "u3" }, spec: { containers: [{ name: "app" }] } }];
    running = await startServers(
      { address: "127.0.0.1", port: 0, readOnlyPort: 0, healthzBindAddress: "127.0.0.1", healthzPort: 0, unsafeLoopbackDebugHandlers: true },
      { getPods: () => pods, metrics: createRegistry(), podLogsDir: dir },
    );
    const res = await fetch(`${running.get("main")!.url}/containerLogs/default/quiet/app?follow=true`);
    const reader = res.body!.getReader();
    let got = new TextDecoder().decode((await reader.read()).value);
    await Bun.sleep(15_000);
    appendFileSync(join(logs, "0.log"), "2026-12-01T08:00:12Z stdout F after the quiet\n");
    while (!got.includes("after the quiet")) {
      const { value, done } = await reader.read();
      if (done) break;
      got += new TextDecoder().decode(value);
    }
    await reader.cancel();
    expect(got).toBe("first\nafter the quiet\n");
  }, 30_000);
});
