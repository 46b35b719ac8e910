// Figure 7 of vs-kubelet.ts: what vs-kubelet-guest.ts measured inside the cgroup v2 guest, as it prints it
// (one line of JSON after GUEST_RESULT_PREFIX among its progress lines), and the table rows made of it,
// each labelled "7. v2 guest: …" — the host figures' rows (vs-table.ts), measured in the guest only and
// compared only with each other, and a row for each figure the guest could not run, with the reason.
import { type AgentResult, type Floor, type Row, tableRows } from "./vs-table.ts";

/** Starts the result's line on the guest's stdout. */
export const GUEST_RESULT_PREFIX = "vs-kubelet-guest result: ";

/** A figure (or one agent's part of it) the guest could not run, and why. */
export interface Skipped {
  figure: string;
  reason: string;
}

export interface GuestResult {
  /** The pod count of figures 1 and 2 in the guest. */
  pods: number;
  kubelet: AgentResult;
  bunlet: AgentResult;
  floor: Floor;
  floorErrors: string[];
  skipped: Skipped[];
  /** The guest's kernel and memory, as it saw them. */
  context: Record<string, unknown>;
}

/** The result line in the guest's stdout; throws naming what is missing or malformed. */
export function parseGuestOutput(stdout: string): GuestResult {
  const line = stdout
    .split("\n")
    .reverse()
    .find((l) => l.startsWith(GUEST_RESULT_PREFIX));
  if (line === undefined) throw new Error(`no "${GUEST_RESULT_PREFIX.trim()}" line in the guest's output`);
  const r = JSON.parse(line.slice(GUEST_RESULT_PREFIX.length)) as Partial<GuestResult>;
  const missing = (["pods", "kubelet", "bunlet", "floor", "skipped"] as const).filter((k) => r[k] === undefined);
  if (missing.length) throw new Error(`the guest's result has no ${missing.join(", ")}`);
  return { floorErrors: [], context: {}, ...r } as GuestResult;
}

const PREFIX = "7. v2 guest: ";

/** The rows of the guest's figures, each labelled "7. v2 guest: …", then one per skipped figure. */
export function guestRows(g: GuestResult): Row[] {
  const measured = tableRows(g.kubelet, g.bunlet, g.floor, [], g.pods).map((r) => ({ ...r, figure: `${PREFIX}${r.figure}` }));
  const skipped = g.skipped.map((s): Row => ({ figure: `${PREFIX}${s.figure}: skipped (${s.reason})`, unit: "", goal: "—" }));
  return [...measured, ...skipped];
}

/** Every error of the guest's run, each saying it is the guest's. */
export function guestErrors(g: GuestResult): string[] {
  return [...g.kubelet.errors, ...g.bunlet.errors, ...g.floorErrors].map((e) => `v2 guest: ${e}`);
}
