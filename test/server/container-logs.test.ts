import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { appendFileSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { decodeCriLine, parseLogOptions } from "../../src/server/container-logs.ts";
import { kubeletRoutes } from "../../src/server/endpoints.ts";
import { createRegistry } from "../../src/server/metrics.ts";
import { createRouter } from "../../src/server/router.ts";

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
    writeFileSync(join(logDir, "1.log"), line("01.0", "stdout", "F", "one") + line("02.0", "stderr", "P", "two-") + line("02.5", "stderr", "F", "b") + line("03.0", "stdout", "F", "three"));
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
