// The user namespace manager (upstream pkg/kubelet/userns/userns_manager.go UsernsManager): a pod
// with hostUsers: false gets its own user namespace, root inside mapped to a slot of the kubelet's id
// range (allocator.ts); the slot is written to <rootDir>/pods/<uid>/userns (mappings-file.ts) before
// the sandbox is created, read back by a restarted kubelet, and released when the pod terminates or
// turns out an orphan. Other pods get mode NODE. File work is synchronous and small: the allocation
// and its file change together, with no other call in between.
import { readFileSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomicSync } from "../../atomic-file.ts";
import type { UserNamespace } from "../../cri/types.ts";
import { kv, log } from "../../log.ts";
import { makePodDir, podDir, podUidError } from "../pod-dir.ts";
import { createUsernsAllocator, DEFAULT_IDS_PER_POD, type UsernsAllocator } from "./allocator.ts";
import type { KubeletMappings } from "./kubelet-mappings.ts";
import { formatMappingsFile, MAPPINGS_FILE, parseMappingsFile, podMappings } from "./mappings-file.ts";

/** Upstream features.UserNamespacesSupport. */
export const USER_NAMESPACES_SUPPORT = "UserNamespacesSupport";

/** The part of a pod the manager reads. */
export interface UsernsPod {
  metadata: { uid: string };
  spec: { hostUsers?: boolean };
}

export interface UsernsManagerOptions {
  rootDir: string;
  /** The UserNamespacesSupport feature gate. */
  featureEnabled: boolean;
  /** userNamespaces.idsPerPod (default 65536). */
  idsPerPod?: number;
  maxPods: number;
  /** The kubelet's id range (kubelet-mappings.ts getKubeletMappings). */
  mappings: KubeletMappings;
  /**
   * Whether the CRI runtime handler ("" = default) supports user namespaces, from the runtime's
   * status (upstream HandlerSupportsUserNamespaces); throws for a handler the runtime does not list.
   */
  handlerSupportsUserNamespaces(runtimeHandler: string): Promise<boolean>;
  randomInt?: (n: number) => number;
}

export interface UsernsManager {
  /**
   * The sandbox's and containers' user namespace (upstream GetOrCreateUserNamespaceMappings): mode
   * NODE unless hostUsers is false, then mode POD with the pod's range, allocated and written on first
   * use. undefined when the gate is off and hostUsers unset. Throws upstream's errors.
   */
  getOrCreateUserNamespaceMappings(pod: UsernsPod, runtimeHandler: string): Promise<UserNamespace | undefined>;
  /** The pod's range freed and its file removed (upstream Release, at syncTerminatedPod). */
  release(uid: string): void;
  /**
   * Frees the ranges of pods neither known (desired or running) nor on disk (upstream
   * CleanupOrphanedPodUsernsAllocations, at housekeeping).
   */
  cleanupOrphanedPodUsernsAllocations(knownUids: Iterable<string>): void;
  /** The pod's first host id, if it holds a range. */
  allocated(uid: string): number | undefined;
}

/** upstream's message for a pod asking for a user namespace the runtime handler cannot give. */
export function handlerLacksUsernsMessage(runtimeHandler: string): string {
  return runtimeHandler
    ? `can't set \`spec.hostUsers: false\`, RuntimeClass handler "${runtimeHandler}" does not support user namespaces`
    : "can't set `spec.hostUsers: false`, runtime does not support user namespaces";
}

/** Pod UIDs with a directory under <rootDir>/pods (upstream listPodsFromDisk); names no pod UID can have are skipped. */
export function listPodsFromDisk(rootDir: string): string[] {
  try {
    return readdirSync(join(rootDir, "pods"), { withFileTypes: true })
      .filter((d) => d.isDirectory() && podUidError(d.name) === undefined)
      .map((d) => d.name);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw e;
  }
}

/** The file's content, "" when there is none (the pod has no user namespace). */
function readMappings(rootDir: string, uid: string): string {
  try {
    return readFileSync(join(podDir(rootDir, uid), MAPPINGS_FILE), "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return "";
    throw e;
  }
}

/** Written atomically (a temporary file fsynced and renamed) and durably (the directory synced), as upstream's file store. */
function writeMappings(rootDir: string, uid: string, content: string): void {
  const dir = makePodDir(rootDir, uid);
  writeFileAtomicSync(join(dir, MAPPINGS_FILE), content, { mode: 0o644, syncDir: true, tmpPath: join(dir, `.${MAPPINGS_FILE}.tmp`) });
}

/** Records the range of a pod's file, if it has one; returns it. */
function recordFromFile(a: UsernsAllocator, rootDir: string, uid: string): { hostId: number; length: number } | undefined {
  const content = readMappings(rootDir, uid);
  if (content === "") return undefined;
  const m = parseMappingsFile(content);
  a.record(uid, m.hostId, m.length);
  return m;
}

/** Upstream MakeUserNsManager: checks the range, then records every pod's file found on disk. */
export function createUsernsManager(o: UsernsManagerOptions): UsernsManager {
  const idsPerPod = o.idsPerPod || DEFAULT_IDS_PER_POD;
  const { rootDir } = o;
  let a: UsernsAllocator | undefined;
  if (o.featureEnabled) {
    a = createUsernsAllocator({ firstId: o.mappings.firstId, length: o.mappings.length, idsPerPod, maxPods: o.maxPods, randomInt: o.randomInt });
    log.info(`user namespace manager ${kv({ firstId: o.mappings.firstId, length: o.mappings.length, idsPerPod, source: o.mappings.source })}`);
    for (const uid of listPodsFromDisk(rootDir)) {
      try {
        recordFromFile(a, rootDir, uid);
      } catch (e) {
        throw new Error(`record pod mappings for existing pod "${uid}": ${(e as Error).message}`);
      }
    }
  }
  const release = (alloc: UsernsAllocator, uid: string) => {
    if (!alloc.release(uid)) return;
    log.info(`released pod user namespace ${kv({ uid })}`);
    rmSync(join(podDir(rootDir, uid), MAPPINGS_FILE), { force: true });
  };
  return {
    async getOrCreateUserNamespaceMappings(pod, runtimeHandler) {
      const hostUsers = pod.spec.hostUsers;
      if (hostUsers === undefined) return a ? { mode: "NODE" } : undefined;
      if (!a) throw new Error(`the feature gate "${USER_NAMESPACES_SUPPORT}" is disabled: can't set spec.HostUsers`);
      if (hostUsers) return { mode: "NODE" };
      let supported = false;
      try {
        supported = await o.handlerSupportsUserNamespaces(runtimeHandler);
      } catch (e) {
        throw new Error(`${handlerLacksUsernsMessage(runtimeHandler)}: ${(e as Error).message}`);
      }
      if (!supported) throw new Error(handlerLacksUsernsMessage(runtimeHandler));
      const uid = pod.metadata.uid;
      let range: { hostId: number; length: number } | undefined;
      try {
        range = recordFromFile(a, rootDir, uid);
      } catch (e) {
        throw new Error(`user namespace: ${(e as Error).message}`);
      }
      if (!range) range = createUserNs(a, rootDir, uid);
      const mapping = { hostId: range.hostId, containerId: 0, length: range.length };
      return { mode: "POD", uids: [mapping], gids: [{ ...mapping }] };
    },
    release: (uid) => a && release(a, uid),
    cleanupOrphanedPodUsernsAllocations(knownUids) {
      if (!a) return;
      const known = new Set(knownUids);
      const found = listPodsFromDisk(rootDir);
      const onDisk = new Set(found);
      for (const uid of found) if (!known.has(uid)) release(a, uid);
      for (const uid of a.uids()) if (!onDisk.has(uid)) release(a, uid);
    },
    allocated: (uid) => a?.allocated(uid),
  };
}

/** Upstream createUserNs: a free range allocated and written; released again when the write fails. */
function createUserNs(a: UsernsAllocator, rootDir: string, uid: string): { hostId: number; length: number } {
  try {
    const hostId = a.allocateOne(uid);
    writeMappings(rootDir, uid, formatMappingsFile(podMappings(hostId, a.idsPerPod)));
    log.info(`new pod user namespace allocation ${kv({ uid, hostId, length: a.idsPerPod })}`);
    return { hostId, length: a.idsPerPod };
  } catch (e) {
    a.release(uid);
    throw new Error(`create user namespace: ${(e as Error).message}`);
  }
}
