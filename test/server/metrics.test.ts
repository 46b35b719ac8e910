import { describe, expect, test } from "bun:test";
import { createRegistry, escapeHelp, escapeLabelValue, formatValue, MetricError } from "../../src/server/metrics.ts";

describe("text format helpers", () => {
  test.each([
    ["plain", "plain"],
    ['say "hi"', 'say \\"hi\\"'],
    ["back\\slash", "back\\\\slash"],
    ["two\nlines", "two\\nlines"],
  ])("escapeLabelValue(%j) = %j", (input, want) => {
    expect(escapeLabelValue(input)).toBe(want);
  });

  test.each([
    ['keeps "quotes"', 'keeps "quotes"'],
    ["a\\b\nc", "a\\\\b\\nc"],
  ])("escapeHelp(%j) = %j", (input, want) => {
    expect(escapeHelp(input)).toBe(want);
  });

  test.each([
    [1, "1"],
    [0.25, "0.25"],
    [Infinity, "+Inf"],
    [-Infinity, "-Inf"],
    [NaN, "NaN"],
    [1e21, "1e+21"],
  ])("formatValue(%p) = %p", (v, want) => {
    expect(formatValue(v)).toBe(want);
  });
});

describe("registry", () => {
  test("counter with labels renders HELP, TYPE and one line per series", () => {
    const r = createRegistry();
    const c = r.counter({ name: "kubelet_evictions", help: "Cumulative number of pod evictions.", labelNames: ["eviction_signal"] });
    c.inc({ eviction_signal: "memory.available" });
    c.inc({ eviction_signal: "memory.available" }, 2);
    c.inc({ eviction_signal: 'we"ird\n' });
    expect(r.render()).toBe(
      [
        "# HELP kubelet_evictions Cumulative number of pod evictions.",
        "# TYPE kubelet_evictions counter",
        'kubelet_evictions{eviction_signal="memory.available"} 3',
        'kubelet_evictions{eviction_signal="we\\"ird\\n"} 1',
        "",
      ].join("\n"),
    );
    expect(c.get({ eviction_signal: "memory.available" })).toBe(3);
  });

  test("gauge without labels: set, inc, dec", () => {
    const r = createRegistry();
    const g = r.gauge({ name: "bunlet_running_pods", help: "Pods running." });
    g.set(5);
    g.inc();
    g.dec(undefined, 3);
    expect(r.render()).toContain("\nbunlet_running_pods 3\n");
  });

  test("histogram renders cumulative buckets, +Inf, _sum and _count", () => {
    const r = createRegistry();
    const h = r.histogram({ name: "sync_seconds", help: "h", labelNames: ["op"], buckets: [0.1, 1] });
    for (const v of [0.05, 0.1, 0.5, 3]) h.observe(v, { op: "sync" });
    expect(r.render()).toBe(
      [
        "# HELP sync_seconds h",
        "# TYPE sync_seconds histogram",
        'sync_seconds_bucket{op="sync",le="0.1"} 2',
        'sync_seconds_bucket{op="sync",le="1"} 3',
        'sync_seconds_bucket{op="sync",le="+Inf"} 4',
        'sync_seconds_sum{op="sync"} 3.65',
        'sync_seconds_count{op="sync"} 4',
        "",
      ].join("\n"),
    );
  });

  test("histogram timer observes elapsed seconds from the injected clock", () => {
    const r = createRegistry();
    const h = r.histogram({ name: "t_seconds", help: "t", buckets: [1] });
    let now = 1000;
    const end = h.startTimer(undefined, () => now);
    now = 1500;
    expect(end()).toBe(0.5);
    expect(r.render()).toContain('t_seconds_bucket{le="1"} 1');
  });

  test("collectors render after stored metrics; a stored name wins", () => {
    const r = createRegistry();
    r.gauge({ name: "a", help: "stored" }).set(1);
    r.collect(() => [
      { name: "a", help: "dup", type: "gauge", samples: [{ value: 9 }] },
      { name: "process_open_fds", help: "fds", type: "gauge", samples: [{ value: 7 }] },
    ]);
    const out = r.render();
    expect(out).toContain("a 1\n");
    expect(out).not.toContain("a 9");
    expect(out).toContain("# TYPE process_open_fds gauge\nprocess_open_fds 7\n");
  });

  test.each([
    ["bad name", () => createRegistry().counter({ name: "1bad", help: "" })],
    ["bad label name", () => createRegistry().gauge({ name: "g", help: "", labelNames: ["__x"] })],
    ["le label on histogram", () => createRegistry().histogram({ name: "h", help: "", labelNames: ["le"] })],
    ["unsorted buckets", () => createRegistry().histogram({ name: "h", help: "", buckets: [1, 0.5] })],
    ["negative counter increment", () => createRegistry().counter({ name: "c", help: "" }).inc(undefined, -1)],
    [
      "missing label",
      () =>
        createRegistry()
          .counter({ name: "c", help: "", labelNames: ["x"] })
          .inc({}),
    ],
    ["unknown label", () => createRegistry().counter({ name: "c", help: "" }).inc({ y: "1" })],
    [
      "duplicate registration",
      () => {
        const r = createRegistry();
        r.counter({ name: "c", help: "" });
        r.gauge({ name: "c", help: "" });
      },
    ],
  ])("rejects %s", (_what, fn) => {
    expect(fn).toThrow(MetricError);
  });

  test("empty registry renders nothing", () => {
    expect(createRegistry().render()).toBe("");
  });
});
