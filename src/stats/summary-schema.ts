// zod schema for a Summary API document (/stats/summary), for files given to
// `bunlet eviction simulate/explain` and summaries fetched from a running agent. Unknown fields
// (network, accelerators, swap, …) pass through; a known field of the wrong type is an error
// naming the file and the field path. Mirrors the types in summary.ts.
import { z } from "zod";
import type { Summary } from "./summary.ts";

const num = z.number().finite();
// Hand-written summaries (simulate fixtures) may leave out sample times: "" is Go's zero time,
// which the eviction manager treats as "always fresh".
const time = z.string().optional().default("");

const cpu = z.looseObject({ time, usageNanoCores: num.optional(), usageCoreNanoSeconds: num.optional() });
const memory = z.looseObject({
  time,
  availableBytes: num.optional(),
  usageBytes: num.optional(),
  workingSetBytes: num.optional(),
  rssBytes: num.optional(),
  pageFaults: num.optional(),
  majorPageFaults: num.optional(),
});
const fs = z.looseObject({
  time,
  availableBytes: num.optional(),
  capacityBytes: num.optional(),
  usedBytes: num.optional(),
  inodesFree: num.optional(),
  inodes: num.optional(),
  inodesUsed: num.optional(),
});
const container = z.looseObject({
  name: z.string(),
  startTime: z.string().optional(),
  cpu: cpu.optional(),
  memory: memory.optional(),
  rootfs: fs.optional(),
  logs: fs.optional(),
});
const volume = fs.extend({ name: z.string() });

export const summarySchema = z.looseObject({
  node: z.looseObject({
    nodeName: z.string(),
    systemContainers: z.array(container).optional(),
    startTime: z.string().optional(),
    cpu: cpu.optional(),
    memory: memory.optional(),
    fs: fs.optional(),
    runtime: z.looseObject({ imageFs: fs.optional(), containerFs: fs.optional() }).optional(),
    rlimit: z.looseObject({ time, maxpid: num.optional(), curproc: num.optional() }).optional(),
  }),
  pods: z
    .array(
      z.looseObject({
        podRef: z.looseObject({ name: z.string(), namespace: z.string(), uid: z.string() }),
        startTime: z.string().optional(),
        containers: z.array(container).optional(),
        cpu: cpu.optional(),
        memory: memory.optional(),
        volume: z.array(volume).optional(),
        "ephemeral-storage": fs.optional(),
        process_stats: z.looseObject({ process_count: num.optional() }).optional(),
      }),
    )
    .optional()
    .default([]),
});

export class SummaryParseError extends Error {
  override name = "SummaryParseError";
}

/** "node.memory.availableBytes", "pods[2].podRef.uid". */
export function issuePath(path: readonly PropertyKey[]): string {
  let s = "";
  for (const p of path) s += typeof p === "number" ? `[${p}]` : s ? `.${String(p)}` : String(p);
  return s || "(document)";
}

/** Validates a decoded Summary; throws SummaryParseError naming `source` and the field. */
export function parseSummary(data: unknown, source: string): Summary {
  const r = summarySchema.safeParse(data);
  if (!r.success) {
    const msgs = r.error.issues.slice(0, 5).map((i) => `${source}: field ${issuePath(i.path)}: ${i.message}`);
    throw new SummaryParseError(msgs.join("\n"));
  }
  return r.data as unknown as Summary;
}

/** Reads text as JSON and validates it; JSON syntax errors name the source too. */
export function parseSummaryText(text: string, source: string): Summary {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw new SummaryParseError(`${source}: invalid JSON: ${(e as Error).message}`);
  }
  return parseSummary(data, source);
}
