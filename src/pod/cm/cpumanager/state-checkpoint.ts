// The `cpu_manager_state` checkpoint file (upstream cm/cpumanager/state/checkpoint.go and
// state_checkpoint.go), byte-compatible with the kubelet's v4 format: the v2 fields (policyName,
// defaultCpuSet, entries, checksum) for older readers, and `data` (the same as JSON) with its
// `dataChecksum`. Both checksums are FNV-32a over the Go spew dump upstream hashes
// (k8s.io/utils/dump.ForHash), reproduced here for the two shapes involved.
import { z } from "zod";
import { formatCPUSet, parseCPUSet } from "../../../config/cpuset.ts";
import { emptyState, type CPUManagerState } from "./state.ts";

export const CPU_MANAGER_STATE_FILE = "cpu_manager_state";

/** FNV-1a, 32 bits, over the UTF-8 bytes of `s` (Go hash/fnv New32a). */
export function fnv32a(s: string): number {
  let h = 0x811c9dc5;
  for (const b of new TextEncoder().encode(s)) {
    h ^= b;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

type Entries = Record<string, Record<string, string>>;

function sortedKeys(o: Record<string, unknown>): string[] {
  return Object.keys(o).sort();
}

/** spew's "%#v" of map[string]map[string]string with sorted keys: map[pod:map[c:1] …]. */
function spewEntries(entries: Entries): string {
  const inner = (m: Record<string, string>) =>
    `map[${sortedKeys(m)
      .map((k) => `${k}:${m[k]}`)
      .join(" ")}]`;
  return `map[${sortedKeys(entries)
    .map((k) => `${k}:${inner(entries[k]!)}`)
    .join(" ")}]`;
}

/** The v2 checksum: FNV-32a of dump.ForHash(&CPUManagerCheckpointV2{…, Checksum: 0}) named CPUManagerCheckpoint. */
export function v2Checksum(policyName: string, defaultCpuSet: string, entries: Entries): number {
  return fnv32a(
    `(*state.CPUManagerCheckpoint){PolicyName:(string)${policyName} DefaultCPUSet:(string)${defaultCpuSet} ` +
      `Entries:(map[string]map[string]string)${spewEntries(entries)} Checksum:(checksum.Checksum)0}`,
  );
}

/** The v4 data checksum: FNV-32a of dump.ForHash(data) for a string. */
export function dataChecksum(data: string): number {
  return fnv32a(`(string)${data}`);
}

function entriesOf(state: CPUManagerState): Entries {
  const out: Entries = {};
  for (const [pod, containers] of state.assignments) {
    out[pod] = {};
    for (const [name, cpus] of containers) out[pod][name] = formatCPUSet(cpus);
  }
  return out;
}

/** The file's text for `state` under `policyName` (upstream storeState → MarshalCheckpoint). */
export function encodeCheckpoint(policyName: string, state: CPUManagerState): string {
  const defaultCpuSet = formatCPUSet(state.defaultCPUSet);
  const entries = entriesOf(state);
  const hasEntries = Object.keys(entries).length > 0;
  // Go's encoding/json writes map keys sorted and leaves empty maps out (omitempty).
  const sorted: Entries = {};
  for (const k of sortedKeys(entries)) sorted[k] = Object.fromEntries(sortedKeys(entries[k]!).map((c) => [c, entries[k]![c]!]));
  const data = JSON.stringify({ policyName, defaultCpuSet, ...(hasEntries ? { entries: sorted } : {}) });
  return JSON.stringify({
    policyName,
    defaultCpuSet,
    ...(hasEntries ? { entries: sorted } : {}),
    checksum: v2Checksum(policyName, defaultCpuSet, entries),
    data,
    dataChecksum: dataChecksum(data),
  });
}

const entriesSchema = z.record(z.string(), z.record(z.string(), z.string()));
const fileSchema = z.object({
  policyName: z.string().optional(),
  defaultCpuSet: z.string().optional(),
  entries: entriesSchema.optional(),
  checksum: z.number().optional(),
  data: z.string().optional(),
  dataChecksum: z.number().optional(),
});
const dataSchema = z.object({ policyName: z.string().optional(), defaultCpuSet: z.string().optional(), entries: entriesSchema.optional() });

/** The checkpoint's fields after its checksum held (v4 data, else the v2 fields); throws as upstream's loaders. */
function verifiedFields(text: string): z.infer<typeof dataSchema> {
  const file = fileSchema.parse(JSON.parse(text));
  if ((file.data ?? "") !== "" || (file.dataChecksum ?? 0) !== 0) {
    if (dataChecksum(file.data ?? "") !== file.dataChecksum) throw new Error("could not load v4 checkpoint: checkpoint is corrupted");
    return dataSchema.parse(JSON.parse(file.data!));
  }
  const ck = file.checksum ?? 0;
  if (ck !== 0 && v2Checksum(file.policyName ?? "", file.defaultCpuSet ?? "", file.entries ?? {}) !== ck) throw new Error("checkpoint is corrupted");
  return file;
}

/**
 * The state of a checkpoint file written for `policyName` (upstream restoreState); throws the reason it
 * cannot be used: not the configured policy, a bad checksum, a set that does not parse.
 */
export function decodeCheckpoint(text: string, policyName: string): CPUManagerState {
  const cp = verifiedFields(text);
  const filePolicy = cp.policyName ?? "";
  if (filePolicy !== policyName)
    throw new Error(`configured policy ${JSON.stringify(policyName)} differs from state checkpoint policy ${JSON.stringify(filePolicy)}`);
  const state = emptyState();
  const defaultCpuSet = cp.defaultCpuSet ?? "";
  try {
    state.defaultCPUSet = parseCPUSet(defaultCpuSet);
  } catch (e) {
    throw new Error(`could not parse default CPU set ${JSON.stringify(defaultCpuSet)}: ${(e as Error).message}`);
  }
  for (const [pod, containers] of Object.entries(cp.entries ?? {})) {
    const m = new Map<string, readonly number[]>();
    for (const [name, s] of Object.entries(containers)) {
      try {
        m.set(name, parseCPUSet(s));
      } catch (e) {
        throw new Error(
          `could not parse cpuset ${JSON.stringify(s)} for container ${JSON.stringify(name)} in pod ${JSON.stringify(pod)}: ${(e as Error).message}`,
        );
      }
    }
    state.assignments.set(pod, m);
  }
  return state;
}

/** Upstream NewCheckpointState's refusal, naming the file to delete. */
export function restoreErrorMessage(cause: string, path: string): string {
  return `could not restore state from checkpoint: ${cause}, please drain this node and delete the CPU manager checkpoint file ${JSON.stringify(path)} before restarting Kubelet`;
}
