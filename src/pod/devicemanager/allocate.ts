// Which devices a container gets (upstream ManagerImpl.devicesToAllocate, manager.go), pure over sets
// of device ids. bunlet has no topology manager, so every device is "no affinity": the devices to
// reuse (an init container's) first, then the plugin's preferred ones among the available, then the
// rest in id order. Errors carry upstream's texts; the admission wraps them into its refusal.

export interface AllocationInput {
  podUID: string;
  containerName: string;
  resource: string;
  required: number;
  /** Devices the container already holds (a restart, or the checkpoint after a kubelet restart). */
  held?: ReadonlySet<string>;
  /** Undefined when the resource never registered. */
  healthy: ReadonlySet<string> | undefined;
  /** Devices assigned to any container. */
  inUse: ReadonlySet<string>;
  /** Devices an earlier init container of the same pod leaves for reuse. */
  reusable?: ReadonlySet<string>;
  /** The plugin's GetPreferredAllocation answer, when it offers one. */
  preferred?: readonly string[];
}

export class AllocationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "AllocationError";
  }
}

/** The new devices to allocate; [] when the container needs none (or already holds them). */
export function devicesToAllocate(i: AllocationInput): string[] {
  const held = i.held ?? new Set<string>();
  let needed = i.required;
  if (held.size > 0) {
    needed -= held.size;
    // A pod's resource is not expected to change once admitted.
    if (needed !== 0)
      throw new AllocationError(
        `pod "${i.podUID}" container "${i.containerName}" changed request for resource "${i.resource}" from ${held.size} to ${i.required}`,
      );
  }
  if (!i.healthy) throw new AllocationError(`cannot allocate unregistered device ${i.resource}`);
  if (i.healthy.size === 0) throw new AllocationError(`no healthy devices present; cannot allocate unhealthy devices ${i.resource}`);
  for (const d of held)
    if (!i.healthy.has(d)) throw new AllocationError(`previously allocated devices are no longer healthy; cannot allocate unhealthy devices ${i.resource}`);
  if (needed === 0) return [];
  const allocated: string[] = [];
  const take = (ids: Iterable<string>) => {
    for (const d of ids) {
      if (needed === 0) return;
      if (allocated.includes(d)) continue;
      allocated.push(d);
      needed--;
    }
  };
  take([...(i.reusable ?? [])].sort());
  if (needed === 0) return allocated;
  const available = [...i.healthy].filter((d) => !i.inUse.has(d)).sort();
  if (available.length < needed)
    throw new AllocationError(`requested number of devices unavailable for ${i.resource}. Requested: ${needed}, Available: ${available.length}`);
  take((i.preferred ?? []).filter((d) => available.includes(d)));
  take(available);
  return allocated;
}
