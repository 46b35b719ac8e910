// At most `limit` calls in flight; the rest wait, the highest priority first, then in arrival order.
// Used for the runtime's heavy pod-start calls (RunPodSandbox, CreateContainer, StartContainer): with
// 100 manifests dropped at once, 100 concurrent sandbox creations share containerd and the CPUs so
// evenly that none finishes early (first Running after 8.4 s), and on 2 CPUs the runtime
// thrashes (bare CRI, 100 pods: all at once 26 s, 8 at a time 15 s; scripts/bench/start100.ts
// --direct). A pod keeps its sandbox's slot for its first container's create and start (acquire),
// and a pod further along goes first among waiters (priority by stage), so pods finish one after
// another, as a few lanes of sandbox → create → start would — without a slot ever being held across
// an image pull or a hook. Upstream has no such limit in the kubelet, but the order and outcome of
// every call are unchanged: only how many overlap.
export interface Slots {
  /** Runs `fn` once a slot is free; among waiters a higher `priority` (default 0) goes first. */
  run<T>(fn: () => Promise<T>, priority?: number): Promise<T>;
  /** Takes a slot (same order as run) and returns its release; calling the release again does nothing. */
  acquire(priority?: number): Promise<() => void>;
}

export function createSlots(limit: number): Slots {
  let busy = 0;
  // Kept sorted: highest priority first, arrival order within a priority.
  const waiting: { priority: number; go: () => void }[] = [];
  const release = () => {
    const next = waiting.shift();
    if (next) next.go();
    else busy--;
  };
  const wait = (priority: number) =>
    new Promise<void>((go) => {
      let i = waiting.length;
      while (i > 0 && waiting[i - 1]!.priority < priority) i--;
      waiting.splice(i, 0, { priority, go });
    });
  const acquire = async (priority = 0) => {
    if (busy < limit) busy++;
    else await wait(priority);
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      release();
    };
  };
  return {
    async run(fn, priority = 0) {
      const done = await acquire(priority);
      try {
        return await fn();
      } finally {
        done();
      }
    },
    acquire,
  };
}
