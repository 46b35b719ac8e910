// graceful_node_shutdown_state and the kubelet_graceful_shutdown_*_time_seconds gauges: written as a
// shutdown starts and ends, restored from the file at the next start (after the reboot).
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createShutdownRecorder, LOCAL_STORAGE_STATE_FILE } from "../../../src/node/shutdown/state.ts";
import { createRegistry } from "../../../src/server/metrics.ts";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const dir = () => {
  const d = mkdtempSync(join(tmpdir(), "bunlet-shutdown-state-"));
  dirs.push(d);
  return d;
};
const gauges = (text: string) =>
  Object.fromEntries([...text.matchAll(/^kubelet_graceful_shutdown_(start|end)_time_seconds (\S+)$/gm)].map((m) => [m[1], Number(m[2])]));

test("a shutdown's start and end are stored and come back as the gauges after the reboot", () => {
  const root = dir();
  const before = createRegistry();
  const r = createShutdownRecorder(root, before);
  r.start(1_700_000_000_000);
  expect(JSON.parse(readFileSync(join(root, LOCAL_STORAGE_STATE_FILE), "utf8"))).toEqual({
    startTime: "2023-11-14T22:13:20.000Z",
    endTime: "0001-01-01T00:00:00Z",
  });
  expect(gauges(before.render())).toEqual({ start: 1_700_000_000, end: 0 });
  r.end(1_700_000_012_500);
  expect(gauges(before.render())).toEqual({ start: 1_700_000_000, end: 1_700_000_012.5 });

  const after = createRegistry();
  createShutdownRecorder(root, after);
  expect(gauges(after.render())).toEqual({ start: 1_700_000_000, end: 1_700_000_012.5 });
});

test.each([
  ["an unfinished shutdown: end 0", JSON.stringify({ startTime: "2023-11-14T22:13:20Z", endTime: "0001-01-01T00:00:00Z" }), { start: 1_700_000_000, end: 0 }],
  [
    "upstream's Go time with an offset",
    JSON.stringify({ startTime: "2023-11-14T23:13:20+01:00", endTime: "2023-11-14T23:13:30.5+01:00" }),
    { start: 1_700_000_000, end: 1_700_000_010.5 },
  ],
  ["not JSON: ignored (gauges 0)", "{", { start: 0, end: 0 }],
  ["wrong shape: ignored (gauges 0)", JSON.stringify({ startTime: 5 }), { start: 0, end: 0 }],
])("state file from the last boot: %s", (_what, content, expected) => {
  const root = dir();
  writeFileSync(join(root, LOCAL_STORAGE_STATE_FILE), content);
  const reg = createRegistry();
  createShutdownRecorder(root, reg);
  expect(gauges(reg.render())).toEqual(expected);
});
