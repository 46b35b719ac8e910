// A small Prometheus registry: counters, gauges and histograms with labels, rendered in the text
// exposition format 0.0.4 (https://prometheus.io/docs/instrumenting/exposition_formats/).
// Written here instead of pulling prom-client: we need a few metric kinds, a correct text format
// and a registry the composition root owns and passes down (no global default registry).

export type Labels = Record<string, string>;

export class MetricError extends Error {
  override name = "MetricError";
}

/** Drops every child series whose labels match `partial` (upstream DeletePartialMatch), e.g. a removed pod's. */
export interface Removable {
  removeMatching(partial: Labels): void;
}

export interface Counter extends Removable {
  inc(labels?: Labels, by?: number): void;
  get(labels?: Labels): number;
}

export interface Gauge extends Removable {
  set(value: number, labels?: Labels): void;
  inc(labels?: Labels, by?: number): void;
  dec(labels?: Labels, by?: number): void;
  get(labels?: Labels): number;
}

export interface Histogram extends Removable {
  /** Creates the child series at zero (so a rate over its first observation is not lost). */
  seed(labels?: Labels): void;
  observe(value: number, labels?: Labels): void;
  /** Starts a timer; calling the returned function observes the elapsed seconds. */
  startTimer(labels?: Labels, nowMs?: () => number): () => number;
}

export interface MetricOpts {
  name: string;
  help: string;
  labelNames?: readonly string[];
}

export interface HistogramOpts extends MetricOpts {
  /** Upper bounds, strictly increasing; +Inf is implicit. */
  buckets?: readonly number[];
}

/** One sample a collector reports at scrape time (for values read from the system, e.g. /proc). */
export interface CollectedMetric {
  name: string;
  help: string;
  type: "counter" | "gauge";
  samples: { labels?: Labels; value: number }[];
}

export interface Registry {
  counter(opts: MetricOpts): Counter;
  gauge(opts: MetricOpts): Gauge;
  histogram(opts: HistogramOpts): Histogram;
  /** Registers a function called on every scrape; its metrics are rendered after stored ones. */
  collect(collector: () => CollectedMetric[]): void;
  /** Renders every metric in the text exposition format (ends with a newline). */
  render(): string;
}

/** Prometheus' client default buckets (seconds). */
export const DEFAULT_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] as const;

export const CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** Escapes a label value: backslash, double quote and line feed. */
export function escapeLabelValue(v: string): string {
  return v.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
}

/** Escapes HELP text: backslash and line feed (quotes stay as they are). */
export function escapeHelp(v: string): string {
  return v.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");
}

/** Formats a sample value as Go's strconv does for Prometheus: +Inf, -Inf, NaN, else shortest. */
export function formatValue(v: number): string {
  if (Number.isNaN(v)) return "NaN";
  if (v === Infinity) return "+Inf";
  if (v === -Infinity) return "-Inf";
  return String(v);
}

function formatLabels(labels: [string, string][]): string {
  if (labels.length === 0) return "";
  return `{${labels.map(([k, v]) => `${k}="${escapeLabelValue(v)}"`).join(",")}}`;
}

function checkName(name: string): void {
  if (!METRIC_NAME.test(name)) {
    throw new MetricError(`invalid metric name ${JSON.stringify(name)}: must match ${METRIC_NAME}`);
  }
}

function checkLabelNames(metric: string, names: readonly string[], reserved: string[] = []): void {
  for (const n of names) {
    if (!LABEL_NAME.test(n) || n.startsWith("__") || reserved.includes(n)) {
      throw new MetricError(
        `metric ${metric}: invalid label name ${JSON.stringify(n)}: must match ${LABEL_NAME}, ` +
          `not start with "__"${reserved.length ? ` and not be ${reserved.join(", ")}` : ""}`,
      );
    }
  }
}

/** Child series keyed by their label values in the declared label order. */
function seriesStore<T>(metric: string, labelNames: readonly string[], init: () => T) {
  const series = new Map<string, { labels: [string, string][]; value: T }>();
  return {
    get(labels: Labels = {}): T {
      const given = Object.keys(labels);
      const unknown = given.filter((k) => !labelNames.includes(k));
      const missing = labelNames.filter((k) => !(k in labels));
      if (unknown.length || missing.length) {
        throw new MetricError(`metric ${metric}: labels {${given.join(",")}} do not match declared labels {${labelNames.join(",")}}`);
      }
      const pairs = labelNames.map((k): [string, string] => [k, String(labels[k])]);
      const key = JSON.stringify(pairs.map(([, v]) => v));
      let entry = series.get(key);
      if (!entry) {
        entry = { labels: pairs, value: init() };
        series.set(key, entry);
      }
      return entry.value;
    },
    entries: () => [...series.values()],
    removeMatching(partial: Labels) {
      const want = Object.entries(partial);
      for (const [key, e] of series) if (want.every(([k, v]) => e.labels.some(([lk, lv]) => lk === k && lv === v))) series.delete(key);
    },
  };
}

interface Stored {
  name: string;
  render(): string[];
}

export function createRegistry(): Registry {
  const stored: Stored[] = [];
  const collectors: (() => CollectedMetric[])[] = [];
  const names = new Set<string>();

  function register(name: string): void {
    checkName(name);
    if (names.has(name)) throw new MetricError(`metric ${name} is already registered`);
    names.add(name);
  }

  function header(name: string, help: string, type: string): string[] {
    return [`# HELP ${name} ${escapeHelp(help)}`, `# TYPE ${name} ${type}`];
  }

  function scalar(opts: MetricOpts, type: "counter" | "gauge") {
    const labelNames = opts.labelNames ?? [];
    register(opts.name);
    checkLabelNames(opts.name, labelNames);
    const store = seriesStore(opts.name, labelNames, () => ({ v: 0 }));
    // As client_golang: a metric without labels is exposed (at 0) from registration on.
    if (labelNames.length === 0) store.get({});
    stored.push({
      name: opts.name,
      render: () => [...header(opts.name, opts.help, type), ...store.entries().map((e) => `${opts.name}${formatLabels(e.labels)} ${formatValue(e.value.v)}`)],
    });
    return store;
  }

  return {
    counter(opts) {
      const store = scalar(opts, "counter");
      return {
        inc(labels, by = 1) {
          if (!(by >= 0)) throw new MetricError(`counter ${opts.name}: increment must be ≥ 0, got ${by}`);
          store.get(labels).v += by;
        },
        get: (labels) => store.get(labels).v,
        removeMatching: store.removeMatching,
      };
    },

    gauge(opts) {
      const store = scalar(opts, "gauge");
      return {
        set(value, labels) {
          store.get(labels).v = value;
        },
        inc(labels, by = 1) {
          store.get(labels).v += by;
        },
        dec(labels, by = 1) {
          store.get(labels).v -= by;
        },
        get: (labels) => store.get(labels).v,
        removeMatching: store.removeMatching,
      };
    },

    histogram(opts) {
      const labelNames = opts.labelNames ?? [];
      const buckets = [...(opts.buckets ?? DEFAULT_BUCKETS)];
      register(opts.name);
      checkLabelNames(opts.name, labelNames, ["le"]);
      if (buckets.length === 0 || buckets.some((b, i) => i > 0 && !(b > buckets[i - 1]!))) {
        throw new MetricError(`histogram ${opts.name}: buckets must be non-empty and strictly increasing`);
      }
      if (buckets[buckets.length - 1] === Infinity) buckets.pop();
      const store = seriesStore(opts.name, labelNames, () => ({
        counts: new Array<number>(buckets.length).fill(0),
        sum: 0,
        count: 0,
      }));
      if (labelNames.length === 0) store.get({});
      const observe = (value: number, labels?: Labels) => {
        const s = store.get(labels);
        // Counts are stored per bucket and made cumulative when rendered.
        const i = buckets.findIndex((b) => value <= b);
        if (i >= 0) s.counts[i]! += 1;
        s.sum += value;
        s.count += 1;
      };
      stored.push({
        name: opts.name,
        render: () => {
          const lines = header(opts.name, opts.help, "histogram");
          for (const e of store.entries()) {
            let cumulative = 0;
            buckets.forEach((b, i) => {
              cumulative += e.value.counts[i]!;
              lines.push(`${opts.name}_bucket${formatLabels([...e.labels, ["le", formatValue(b)]])} ${cumulative}`);
            });
            lines.push(`${opts.name}_bucket${formatLabels([...e.labels, ["le", "+Inf"]])} ${e.value.count}`);
            lines.push(`${opts.name}_sum${formatLabels(e.labels)} ${formatValue(e.value.sum)}`);
            lines.push(`${opts.name}_count${formatLabels(e.labels)} ${e.value.count}`);
          }
          return lines;
        },
      });
      return {
        observe,
        seed: (labels) => void store.get(labels),
        removeMatching: store.removeMatching,
        startTimer(labels, nowMs = () => performance.now()) {
          const start = nowMs();
          return () => {
            const seconds = (nowMs() - start) / 1000;
            observe(seconds, labels);
            return seconds;
          };
        },
      };
    },

    collect(collector) {
      collectors.push(collector);
    },

    render() {
      const lines: string[] = [];
      for (const m of stored) lines.push(...m.render());
      for (const collector of collectors) {
        for (const m of collector()) {
          if (names.has(m.name)) continue; // a stored metric of the same name wins
          checkName(m.name);
          lines.push(...header(m.name, m.help, m.type));
          for (const s of m.samples) {
            const pairs = Object.entries(s.labels ?? {});
            lines.push(`${m.name}${formatLabels(pairs)} ${formatValue(s.value)}`);
          }
        }
      }
      return lines.length ? lines.join("\n") + "\n" : "";
    },
  };
}
