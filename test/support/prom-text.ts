// A strict reader of the Prometheus text exposition format (0.0.4) for tests: every line must be
// a HELP, a TYPE or a sample of the family last declared; returns the families with their samples.
export interface PromSample {
  name: string;
  labels: Record<string, string>;
  value: number;
  timestampMs?: number;
}
export interface PromFamily {
  name: string;
  help: string;
  type: string;
  samples: PromSample[];
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? ([^ ]+)(?: (-?\d+))?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(?:,|$)/y;

function parseLabels(s: string, line: string): Record<string, string> {
  const out: Record<string, string> = {};
  LABEL.lastIndex = 0;
  while (LABEL.lastIndex < s.length) {
    const m = LABEL.exec(s);
    if (!m) throw new Error(`bad labels in ${JSON.stringify(line)}`);
    out[m[1]!] = m[2]!.replace(/\\n/g, "\n").replace(/\\"/g, '"').replace(/\\\\/g, "\\");
  }
  return out;
}

export function parsePromText(text: string): Map<string, PromFamily> {
  const families = new Map<string, PromFamily>();
  let current: PromFamily | undefined;
  if (!text.endsWith("\n")) throw new Error("exposition must end with a newline");
  for (const line of text.slice(0, -1).split("\n")) {
    const help = /^# HELP ([^ ]+) (.*)$/.exec(line);
    if (help) {
      if (families.has(help[1]!)) throw new Error(`family ${help[1]} declared twice`);
      current = { name: help[1]!, help: help[2]!, type: "untyped", samples: [] };
      families.set(current.name, current);
      continue;
    }
    const type = /^# TYPE ([^ ]+) (counter|gauge|histogram|summary|untyped)$/.exec(line);
    if (type) {
      if (!current || current.name !== type[1]) throw new Error(`TYPE for ${type[1]} outside its family`);
      current.type = type[2]!;
      continue;
    }
    const m = SAMPLE.exec(line);
    if (!m) throw new Error(`not a sample: ${JSON.stringify(line)}`);
    if (!current || !(m[1] === current.name || m[1]!.startsWith(`${current.name}_`))) throw new Error(`sample ${m[1]} outside its family`);
    // The exposition format spells infinities +Inf/-Inf (Number() only reads "Infinity").
    const value = m[3] === "+Inf" ? Infinity : m[3] === "-Inf" ? -Infinity : Number(m[3]);
    if (Number.isNaN(value) && m[3] !== "NaN") throw new Error(`bad value in ${JSON.stringify(line)}`);
    current.samples.push({ name: m[1]!, labels: m[2] ? parseLabels(m[2], line) : {}, value, timestampMs: m[4] ? Number(m[4]) : undefined });
  }
  return families;
}
