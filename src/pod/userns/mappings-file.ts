// The per-pod user namespace file (upstream pkg/kubelet/userns/userns_manager.go userNamespace,
// writeMappingsToFile, parseUserNsFileAndRecord): <rootDir>/pods/<uid>/userns holds the pod's one
// uid and one gid mapping as JSON, so a restarted kubelet gives the pod the same range again.
//   {"uidMappings":[{"hostId":65536,"containerId":0,"length":65536}],"gidMappings":[…the same…]}
import { z } from "zod";

/** The file's name in the pod directory (upstream mappingsFile). */
export const MAPPINGS_FILE = "userns";

/** One id range; field order and names as upstream's idMapping JSON. */
export interface IdMapping {
  hostId: number;
  containerId: number;
  length: number;
}

/** The file's content (upstream userNamespace). */
export interface UserNamespaceMappings {
  uidMappings: IdMapping[];
  gidMappings: IdMapping[];
}

const uint32 = z.number().int().min(0).max(0xffff_ffff);
// encoding/json ignores unknown fields; absent numbers are 0 and absent lists empty.
const idMapping = z.looseObject({ hostId: uint32.default(0), containerId: uint32.default(0), length: uint32.default(0) });
const mappingsFile = z.looseObject({
  uidMappings: z
    .array(idMapping)
    .nullish()
    .transform((v) => v ?? []),
  gidMappings: z
    .array(idMapping)
    .nullish()
    .transform((v) => v ?? []),
});

export class MappingsFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "MappingsFileError";
  }
}

/** Both mappings: container id 0 from hostId, `length` ids (upstream createUserNs). */
export function podMappings(hostId: number, length: number): UserNamespaceMappings {
  return { uidMappings: [{ hostId, containerId: 0, length }], gidMappings: [{ hostId, containerId: 0, length }] };
}

/** The file's bytes as Go's json.Marshal writes them (no spaces, struct field order). */
export function formatMappingsFile(m: UserNamespaceMappings): string {
  const list = (xs: IdMapping[]) => xs.map((x) => ({ hostId: x.hostId, containerId: x.containerId, length: x.length }));
  return JSON.stringify({ uidMappings: list(m.uidMappings), gidMappings: list(m.gidMappings) });
}

const sameMapping = (a: IdMapping, b: IdMapping) => a.hostId === b.hostId && a.containerId === b.containerId && a.length === b.length;

/**
 * The file parsed and checked as upstream parseUserNsFileAndRecord does: exactly one uid mapping,
 * the gid mapping identical, root (id 0) mapped. Throws MappingsFileError with upstream's message.
 */
export function parseMappingsFile(content: string): IdMapping {
  let raw: unknown;
  try {
    raw = JSON.parse(content);
  } catch (e) {
    throw new MappingsFileError(`invalid user namespace mappings file: ${(e as Error).message}`);
  }
  const parsed = mappingsFile.safeParse(raw);
  if (!parsed.success) throw new MappingsFileError(`invalid user namespace mappings file: ${z.prettifyError(parsed.error)}`);
  const { uidMappings: uids, gidMappings: gids } = parsed.data;
  if (uids.length !== 1) throw new MappingsFileError("invalid user namespace configuration: no more than one mapping allowed.");
  if (uids.length !== gids.length) throw new MappingsFileError("invalid user namespace configuration: GID and UID mappings should be identical.");
  if (!sameMapping(uids[0]!, gids[0]!)) throw new MappingsFileError("invalid user namespace configuration: GID and UID mapping should be identical");
  // Some runtimes assume root is mapped, and only files this kubelet wrote are trusted.
  if (uids[0]!.containerId !== 0) throw new MappingsFileError("invalid user namespace configuration: UID 0 must be mapped");
  const { hostId, containerId, length } = uids[0]!;
  return { hostId, containerId, length };
}
