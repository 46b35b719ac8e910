// At most `limit` calls of a kind in flight; the rest wait in arrival order. Used for RunPodSandbox:
// with 100 manifests dropped at once, 100 concurrent sandbox creations share containerd and the CPUs
// so evenly that none finishes early (first Running after 8.4 s, issue #14); a few at a time finish
// one after another while the later pods wait. Upstream has no such limit in the kubelet, but the
// order and outcome of every call are unchanged: only how many overlap.
export interface Slots {
  run<T>(fn: () => Promise<T>): Promise<T>;
}

export function createSlots(limit: number): Slots {
  let busy = 0;
  const waiting: (() => void)[] = [];
  const release = () => {
    const next = waiting.shift();
    if (next) next();
    else busy--;
  };
  return {
    async run(fn) {
      if (busy < limit) busy++;
      else await new Promise<void>((r) => waiting.push(r));
      try {
        return await fn();
      } finally {
        release();
      }
    },
  };
}
