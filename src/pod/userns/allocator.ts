// The ranges of host ids handed to pods with their own user namespace (upstream
// pkg/kubelet/userns/userns_manager.go: MakeUserNsManager's checks, allocateOne, record, release).
// The kubelet's id range [firstId, firstId+length) is cut into slots of idsPerPod ids; each pod with
// hostUsers: false holds one slot, picked at random among the free ones (upstream's allocation
// bitmap scans from a random offset) so pods of different nodes rarely share a range. Pure.

/** Upstream userNsUnitLength: ranges are whole multiples of 65536 ids. */
export const USERNS_UNIT_LENGTH = 65536;
/** Upstream DefaultKubeletUserNamespacesIDsPerPod. */
export const DEFAULT_IDS_PER_POD = 65536;

export interface AllocatorOptions {
  /** First id of the kubelet's range (getsubids' start, or idsPerPod by default). */
  firstId: number;
  /** Ids in the kubelet's range. */
  length: number;
  idsPerPod: number;
  /** kubelet maxPods: the range must hold a slot for each. */
  maxPods: number;
  /** A random integer in [0, n) (tests: a seeded one). */
  randomInt?: (n: number) => number;
}

export interface UsernsAllocator {
  readonly idsPerPod: number;
  /** A free slot for the pod; returns its first host id. Throws when none is free. */
  allocateOne(uid: string): number;
  /** Marks [from, from+length) as the pod's (a range read back from its file); throws upstream's errors. */
  record(uid: string, from: number, length: number): void;
  /** Frees the pod's slot; false when it held none. */
  release(uid: string): boolean;
  /** The pod's first host id, if it holds a slot. */
  allocated(uid: string): number | undefined;
  /** Pods holding a slot. */
  uids(): string[];
}

/** Upstream MakeUserNsManager's checks of the kubelet's range; undefined when usable. */
export function rangeError(o: Pick<AllocatorOptions, "firstId" | "length" | "idsPerPod" | "maxPods">): string | undefined {
  const { firstId, length, idsPerPod } = o;
  if (idsPerPod % USERNS_UNIT_LENGTH !== 0) return `kubelet user namespace length ${idsPerPod} is not a multiple of ${USERNS_UNIT_LENGTH}`;
  if (firstId % idsPerPod !== 0) return `kubelet user assigned ID ${firstId} is not a multiple of ${idsPerPod}`;
  // Mapping host id 0 (root) into a pod would defeat the point.
  if (firstId < idsPerPod) return `kubelet user assigned ID ${firstId} must be greater or equal to ${idsPerPod}`;
  if (length % idsPerPod !== 0) return `kubelet user assigned IDs length ${length} is not a multiple of ${idsPerPod}`;
  if (Math.floor(length / idsPerPod) < o.maxPods) return `kubelet user assigned IDs are not enough to support ${o.maxPods} pods`;
  return undefined;
}

export function createUsernsAllocator(o: AllocatorOptions): UsernsAllocator {
  const err = rangeError(o);
  if (err) throw new Error(err);
  const { idsPerPod } = o;
  const off = o.firstId / idsPerPod;
  const slots = o.length / idsPerPod;
  const used = new Uint8Array(slots);
  let count = 0;
  const usedBy = new Map<string, number>();
  const randomInt = o.randomInt ?? ((n: number) => Math.floor(Math.random() * n));
  const indexOf = (from: number) => Math.floor(from / idsPerPod) - off;

  return {
    idsPerPod,
    allocateOne(uid) {
      if (count >= slots) throw new Error("could not find an empty slot to allocate a user namespace");
      const start = randomInt(slots);
      let at = start;
      while (used[at] === 1) at = (at + 1) % slots;
      used[at] = 1;
      count++;
      const firstId = (at + off) * idsPerPod;
      usedBy.set(uid, firstId);
      return firstId;
    },
    record(uid, from, length) {
      if (length !== idsPerPod) throw new Error(`wrong user namespace length ${length}`);
      if (from % idsPerPod !== 0) throw new Error(`wrong user namespace offset specified ${from}`);
      const prev = usedBy.get(uid);
      if (prev !== undefined && prev !== from) throw new Error(`different user namespace range already used by pod "${uid}"`);
      const index = indexOf(from);
      if (index < 0 || index >= slots) throw new Error(`id ${from} is out of range`);
      if (prev === undefined && used[index] === 1) throw new Error(`range picked for pod "${uid}" already taken`);
      if (prev !== undefined) return;
      used[index] = 1;
      count++;
      usedBy.set(uid, from);
    },
    release(uid) {
      const from = usedBy.get(uid);
      if (from === undefined) return false;
      usedBy.delete(uid);
      const index = indexOf(from);
      if (used[index] === 1) {
        used[index] = 0;
        count--;
      }
      return true;
    },
    allocated: (uid) => usedBy.get(uid),
    uids: () => [...usedBy.keys()],
  };
}
