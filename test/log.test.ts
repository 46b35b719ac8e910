import { afterEach, describe, expect, test } from "bun:test";
import { flushLog, formatLogLine, kv, log } from "../src/log.ts";

describe("formatLogLine", () => {
  test("klog layout: level letter, MMDD hh:mm:ss.uuuuuu, pid, message", () => {
    const date = new Date(2026, 10, 29, 10, 42, 0, 123);
    expect(formatLogLine({ type: "warn", tag: "", date, args: [`evicting ${kv({ pod: "default/hog", note: "a b" })}`] }, 4242)).toBe(
      'W1129 10:42:00.123000    4242] evicting pod=default/hog note="a b"',
    );
  });
});

describe("repeated lines", () => {
  test("every repeat reaches the reporters at once, however many there are (no folding, as klog)", () => {
    const lines: string[] = [];
    const reporter = { log: (o: { args: unknown[] }) => void lines.push(String(o.args[0])) };
    log.addReporter(reporter);
    try {
      log.info("other");
      for (let i = 0; i < 10; i++) log.info("same");
    } finally {
      log.removeReporter(reporter);
      const realWrite = process.stderr.write;
      process.stderr.write = (() => true) as typeof process.stderr.write;
      flushLog(); // the klog reporter's batch of these lines, not written
      process.stderr.write = realWrite;
    }
    expect(lines).toEqual(["other", ...Array.from({ length: 10 }, () => "same")]);
  });
});

describe("log writes are batched per event-loop turn", () => {
  const realWrite = process.stderr.write.bind(process.stderr);
  let written: string[] = [];
  const capture = () => {
    written = [];
    process.stderr.write = ((chunk: string | Uint8Array) => (written.push(String(chunk)), true)) as typeof process.stderr.write;
  };
  afterEach(() => {
    flushLog();
    process.stderr.write = realWrite;
  });

  test("nothing is written during the turn that logs; the next turn writes every line in order, stamped when logged", async () => {
    capture();
    const before = Date.now();
    log.info("first");
    log.warn("second");
    const after = Date.now();
    expect(written).toEqual([]);
    await new Promise((r) => setImmediate(r));
    const lines = written.join("").split("\n").filter(Boolean);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^I\d{4} [\d:.]+ +\d+\] first$/);
    expect(lines[1]).toMatch(/^W\d{4} [\d:.]+ +\d+\] second$/);
    const hms = (ms: number) => formatLogLine({ type: "info", tag: "", date: new Date(ms), args: [""] }).slice(6, 14);
    expect([hms(before), hms(after)]).toContain(lines[0]!.slice(6, 14));
  });

  test("flushLog writes the pending lines at once", () => {
    capture();
    log.info("now");
    flushLog();
    expect(written.join("")).toMatch(/\] now\n$/);
  });

  test("lines logged right before process.exit are still written", async () => {
    const script = `import { log } from ${JSON.stringify(`${import.meta.dir}/../src/log.ts`)}; log.info("last words"); process.exit(3);`;
    const p = Bun.spawn([process.execPath, "-e", script], { stderr: "pipe", stdout: "ignore" });
    const [code, err] = await Promise.all([p.exited, new Response(p.stderr).text()]);
    expect(code).toBe(3);
    expect(err).toMatch(/\] last words\n$/);
  });
});
