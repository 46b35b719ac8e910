// Retry pacing of API-server calls — node registration, the lease, reflectors and the pod source:
// start, double, cap (upstream registerWithAPIServer: 100 ms → 7 s; nodelease: 200 ms → 7 s).
export function backoff(initialMs: number, maxMs: number) {
  let next = initialMs;
  return {
    next(): number {
      const d = next;
      next = Math.min(maxMs, next * 2);
      return d;
    },
    reset() {
      next = initialMs;
    },
  };
}
