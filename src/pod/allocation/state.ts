// Per-pod container resources kept across restarts (upstream pkg/kubelet/allocation/state: the
// "allocated_pods_state" and "actuated_pods_state" checkpoints in the root dir). Allocated: what
// admission (or an admitted resize) granted; actuated: what was last applied to each running
// container. Our format: JSON with an FNV-1a checksum of the pods, written to a temporary file,
// fsynced and renamed over the old one; an unreadable or corrupt file is reported and the state
// starts empty.
import { readFileSync } from "node:fs";
import { z } from "zod";
import { writeFileAtomic } from "../../atomic-file.ts";
import { kv, log } from "../../log.ts";
import { fnv1a32 } from "../kuberuntime/hash.ts";

/** A container's requests and limits, as quantity strings (core/v1 ResourceRequirements). */
export interface ContainerResources {
  requests?: Record<string, string>;
  limits?: Record<string, string>;
}

/** upstream state.PodResourceInfo: the containers' resources by container name. */
export interface PodResourceInfo {
  containers: Record<string, ContainerResources>;
}

const resourceList = z.record(z.string(), z.string());
const containerResources = z.strictObject({ requests: resourceList.optional(), limits: resourceList.optional() });
const podResourceInfo = z.strictObject({ containers: z.record(z.string(), containerResources) });
const checkpointFile = z.strictObject({
  version: z.literal(1),
  pods: z.record(z.string(), podResourceInfo),
  checksum: z.number().int(),
});

export class CheckpointError extends Error {}

const checksumOf = (pods: Record<string, PodResourceInfo>) => fnv1a32(JSON.stringify(pods));

/** The checkpoint's text → its pods; throws CheckpointError naming the file and what is wrong. */
export function parseCheckpoint(text: string, file: string): Map<string, PodResourceInfo> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new CheckpointError(`${file}: not JSON: ${(e as Error).message}`);
  }
  const parsed = checkpointFile.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new CheckpointError(
      `${file}: ${issue?.path.join(".") || "(top)"}: ${issue?.message}; want {version: 1, pods: {<uid>: {containers: {<name>: {requests, limits}}}}, checksum}`,
    );
  }
  if (checksumOf(parsed.data.pods) !== parsed.data.checksum) throw new CheckpointError(`${file}: checksum mismatch (the file is corrupt)`);
  return new Map(Object.entries(parsed.data.pods));
}

/** The pods as the checkpoint's text. */
export function serializeCheckpoint(pods: ReadonlyMap<string, PodResourceInfo>): string {
  const obj = Object.fromEntries([...pods].sort(([a], [b]) => a.localeCompare(b)));
  return JSON.stringify({ version: 1, pods: obj, checksum: checksumOf(obj) });
}

/** upstream state.State: one checkpoint's pods, in memory, written through to `file` (undefined: memory only). */
export interface ResourceState {
  get(uid: string): PodResourceInfo | undefined;
  getContainer(uid: string, name: string): ContainerResources | undefined;
  setPod(uid: string, info: PodResourceInfo): void;
  setContainer(uid: string, name: string, resources: ContainerResources): void;
  removePod(uid: string): void;
  /** Forgets every pod not in `keep` (upstream RemoveOrphanedPods). */
  removeOrphans(keep: ReadonlySet<string>): void;
  /** Resolves once what was set so far is on disk. */
  flushed(): Promise<void>;
}

/** Reads `file` once (a bad file: one error line naming it, then an empty state); writes are coalesced, one in flight. */
export function createResourceState(file: string | undefined): ResourceState {
  const pods = file ? load(file) : new Map<string, PodResourceInfo>();
  let writing: Promise<void> = Promise.resolve();
  let dirty = false;
  const save = () => {
    if (!file || dirty) return;
    dirty = true;
    writing = writing.then(async () => {
      dirty = false;
      try {
        await writeFileAtomic(file, serializeCheckpoint(pods));
      } catch (e) {
        log.error(`cannot write the pod resources checkpoint ${kv({ file, error: (e as Error).message })}`);
      }
    });
  };
  return {
    get: (uid) => pods.get(uid),
    getContainer: (uid, name) => pods.get(uid)?.containers[name],
    setPod(uid, info) {
      pods.set(uid, structuredClone(info));
      save();
    },
    setContainer(uid, name, resources) {
      const info = pods.get(uid) ?? { containers: {} };
      info.containers[name] = structuredClone(resources);
      pods.set(uid, info);
      save();
    },
    removePod(uid) {
      if (pods.delete(uid)) save();
    },
    removeOrphans(keep) {
      let changed = false;
      for (const uid of [...pods.keys()]) if (!keep.has(uid)) changed = pods.delete(uid) || changed;
      if (changed) save();
    },
    flushed: () => writing,
  };
}

function load(file: string): Map<string, PodResourceInfo> {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT")
      log.error(`cannot read the pod resources checkpoint, starting empty ${kv({ file, error: (e as Error).message })}`);
    return new Map();
  }
  try {
    return parseCheckpoint(text, file);
  } catch (e) {
    log.error(`bad pod resources checkpoint, starting empty ${kv({ file, error: (e as Error).message })}`);
    return new Map();
  }
}
