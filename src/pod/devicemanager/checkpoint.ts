// The device manager's checkpoint, <rootDir>/device-plugins/kubelet_internal_checkpoint, in upstream's
// JSON (pkg/kubelet/cm/devicemanager/checkpoint/checkpoint.go): {"Data":{"PodDeviceEntries":[…],
// "RegisteredDevices":{…}},"Checksum":N}, AllocResp the protobuf ContainerAllocateResponse in base64.
// The checksum is upstream's (checkpointmanager/checksum): FNV-32a over spew's "%#v" of the data
// (k8s.io/utils/dump.ForHash), so a file written by either kubelet verifies in the other. The spew
// text is computed over the JSON as parsed, which is what upstream's Verify sees after Unmarshal: a
// JSON null is Go's nil ("<nil>"), [] an empty slice ("[]").
import { z } from "zod";

/** Upstream's NUMA node key for devices without topology (nodeWithoutTopology). */
export const NODE_WITHOUT_TOPOLOGY = -1;

export const CHECKPOINT_FILE = "kubelet_internal_checkpoint";

const entrySchema = z.object({
  PodUID: z.string(),
  ContainerName: z.string(),
  ResourceName: z.string(),
  DeviceIDs: z.record(z.string().regex(/^-?\d+$/), z.array(z.string()).nullable()).nullable(),
  AllocResp: z.string().nullable(),
});

const checkpointSchema = z.object({
  Data: z.object({
    PodDeviceEntries: z.array(entrySchema).nullable(),
    RegisteredDevices: z.record(z.string(), z.array(z.string()).nullable()).nullable(),
  }),
  Checksum: z.number().int().nonnegative(),
});

export type PodDevicesEntryJson = z.infer<typeof entrySchema>;
export type CheckpointDataJson = z.infer<typeof checkpointSchema>["Data"];

/** One container's devices of one resource, as the manager keeps them. */
export interface PodDevicesEntry {
  podUID: string;
  containerName: string;
  resourceName: string;
  /** Device ids by NUMA node (NODE_WITHOUT_TOPOLOGY when the plugin gave none). */
  deviceIds: Map<number, string[]>;
  /** The plugin's ContainerAllocateResponse, protobuf-encoded. */
  allocResp: Uint8Array;
}

export interface CheckpointData {
  entries: PodDevicesEntry[];
  registeredDevices: Record<string, string[]>;
}

export class CorruptCheckpointError extends Error {
  constructor(file: string, detail: string) {
    super(`checkpoint ${file} is corrupted: ${detail}`);
    this.name = "CorruptCheckpointError";
  }
}

const goSlice = (v: readonly string[] | null) => (v === null ? "<nil>" : `[${v.join(" ")}]`);
const bytesText = (b64: string | null) => (b64 === null ? "<nil>" : `[${[...Buffer.from(b64, "base64")].join(" ")}]`);
/** Go's sort of strings: by bytes (UTF-8), which for these keys is code unit order. */
const byBytes = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));
const byNumber = (a: string, b: string) => Number(a) - Number(b);

/** spew's text of a map of string slices, its keys sorted as spew's SortKeys does for their type. */
function goMapText(m: Record<string, string[] | null> | null, order: (a: string, b: string) => number): string {
  if (m === null) return "<nil>";
  const items = Object.keys(m)
    .sort(order)
    .map((k) => `${k}:${goSlice(m[k] ?? null)}`);
  return `map[${items.join(" ")}]`;
}

function entryText(e: PodDevicesEntryJson): string {
  return (
    `{PodUID:(string)${e.PodUID} ContainerName:(string)${e.ContainerName} ResourceName:(string)${e.ResourceName} ` +
    `DeviceIDs:(checkpoint.DevicesPerNUMA)${goMapText(e.DeviceIDs, byNumber)} AllocResp:([]uint8)${bytesText(e.AllocResp)}}`
  );
}

/** spew's "%#v" of upstream's checkpointData (DisableMethods, SortKeys, no pointer addresses). */
export function checkpointHashText(data: CheckpointDataJson): string {
  const entries = data.PodDeviceEntries === null ? "<nil>" : `[${data.PodDeviceEntries.map(entryText).join(" ")}]`;
  const registered = goMapText(data.RegisteredDevices, byBytes);
  return `(checkpoint.checkpointData){PodDeviceEntries:([]checkpoint.PodDevicesEntry)${entries} RegisteredDevices:(map[string][]string)${registered}}`;
}

/** FNV-1a, 32 bits, over the UTF-8 bytes (Go's hash/fnv New32a). */
export function fnv32a(text: string): number {
  let h = 0x811c9dc5;
  for (const b of Buffer.from(text, "utf8")) {
    h ^= b;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

export const checkpointChecksum = (data: CheckpointDataJson): number => fnv32a(checkpointHashText(data));

/** The data in upstream's JSON form: no entries is Go's nil slice (null), as upstream's toCheckpointData. */
export function toCheckpointJson(data: CheckpointData): CheckpointDataJson {
  const entries = data.entries.map(
    (e): PodDevicesEntryJson => ({
      PodUID: e.podUID,
      ContainerName: e.containerName,
      ResourceName: e.resourceName,
      DeviceIDs: Object.fromEntries([...e.deviceIds].sort(([a], [b]) => a - b).map(([k, v]) => [String(k), v])),
      AllocResp: Buffer.from(e.allocResp).toString("base64"),
    }),
  );
  return { PodDeviceEntries: entries.length ? entries : null, RegisteredDevices: data.registeredDevices };
}

/** A Go map in JSON: keys sorted as strings, by bytes (JS objects put integer-like keys first). */
const goMapJson = (m: Record<string, unknown> | null) =>
  m === null
    ? "null"
    : `{${Object.keys(m)
        .sort(byBytes)
        .map((k) => `${JSON.stringify(k)}:${JSON.stringify(m[k])}`)
        .join(",")}}`;

const entryJson = (e: PodDevicesEntryJson) =>
  `{"PodUID":${JSON.stringify(e.PodUID)},"ContainerName":${JSON.stringify(e.ContainerName)},"ResourceName":${JSON.stringify(e.ResourceName)},` +
  `"DeviceIDs":${goMapJson(e.DeviceIDs)},"AllocResp":${JSON.stringify(e.AllocResp)}}`;

/** The file's text: Go's json.Marshal of {Data, Checksum} (struct fields in order, map keys sorted). */
export function marshalCheckpoint(data: CheckpointData): string {
  const json = toCheckpointJson(data);
  const entries = json.PodDeviceEntries === null ? "null" : `[${json.PodDeviceEntries.map(entryJson).join(",")}]`;
  return `{"Data":{"PodDeviceEntries":${entries},"RegisteredDevices":${goMapJson(json.RegisteredDevices)}},"Checksum":${checkpointChecksum(json)}}`;
}

/** Parses and verifies a checkpoint file's text; CorruptCheckpointError when it does not hold. */
export function unmarshalCheckpoint(text: string, file = CHECKPOINT_FILE): CheckpointData {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new CorruptCheckpointError(file, (e as Error).message);
  }
  const parsed = checkpointSchema.safeParse(raw);
  if (!parsed.success) throw new CorruptCheckpointError(file, parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; "));
  const actual = checkpointChecksum(parsed.data.Data);
  if (actual !== parsed.data.Checksum) throw new CorruptCheckpointError(file, `checksum ${parsed.data.Checksum}, computed ${actual}`);
  const d = parsed.data.Data;
  return {
    entries: (d.PodDeviceEntries ?? []).map((e) => ({
      podUID: e.PodUID,
      containerName: e.ContainerName,
      resourceName: e.ResourceName,
      deviceIds: new Map(
        Object.entries(e.DeviceIDs ?? {})
          .map(([k, v]): [number, string[]] => [Number(k), v ?? []])
          .sort(([a], [b]) => a - b),
      ),
      allocResp: new Uint8Array(Buffer.from(e.AllocResp ?? "", "base64")),
    })),
    registeredDevices: Object.fromEntries(Object.entries(d.RegisteredDevices ?? {}).map(([k, v]) => [k, v ?? []])),
  };
}
