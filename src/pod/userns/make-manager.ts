// The user namespace manager as the agent starts it (upstream kubelet.go NewMainKubelet calling
// MakeUserNsManager): the kubelet's id range is looked up (getsubids may run a command) and the pods'
// files read back once, at start; a failure there fails the agent's start, as upstream's kubelet. Every
// call waits for that start, so a pod synced first still gets the range its file holds.
import type { UserNamespace } from "../../cri/types.ts";
import { DEFAULT_IDS_PER_POD } from "./allocator.ts";
import { getKubeletMappings, type MappingsHost } from "./kubelet-mappings.ts";
import { createUsernsManager, type UsernsManager, type UsernsManagerOptions, type UsernsPod } from "./userns-manager.ts";

/** The manager's calls once started, each waiting for the start. */
export interface UserNsService {
  /** Looks up the range and records the pods' files; throws `create user namespace manager: …`. */
  start(): Promise<void>;
  getOrCreateUserNamespaceMappings(pod: UsernsPod, runtimeHandler: string): Promise<UserNamespace | undefined>;
  release(uid: string): Promise<void>;
  cleanupOrphanedPodUsernsAllocations(knownUids: Iterable<string>): Promise<void>;
}

export function makeUserNsManager(o: Omit<UsernsManagerOptions, "mappings"> & { mappingsHost?: MappingsHost }): UserNsService {
  let started: Promise<UsernsManager> | undefined;
  const manager = () => {
    started ??= (async () => {
      try {
        // Upstream looks the range up only with the gate on; the default range stands in otherwise.
        const mappings = await getKubeletMappings(o.idsPerPod || DEFAULT_IDS_PER_POD, o.featureEnabled ? o.mappingsHost : fixedDefault);
        return createUsernsManager({ ...o, mappings });
      } catch (e) {
        throw new Error(`create user namespace manager: ${(e as Error).message}`);
      }
    })();
    return started;
  };
  return {
    start: async () => void (await manager()),
    getOrCreateUserNamespaceMappings: async (pod, handler) => (await manager()).getOrCreateUserNamespaceMappings(pod, handler),
    release: async (uid) => (await manager()).release(uid),
    cleanupOrphanedPodUsernsAllocations: async (uids) => (await manager()).cleanupOrphanedPodUsernsAllocations(uids),
  };
}

/** A host with no kubelet user: getKubeletMappings' default range. */
const fixedDefault: MappingsHost = { userExists: () => false, lookPath: () => undefined, output: async () => "" };
