// A seeded PRNG (mulberry32) so the fuzz suites generate the same inputs on every run.
export interface Rand {
  next(): number;
  int(n: number): number;
  pick<T>(xs: readonly T[]): T;
}

export function seededRand(seed: number): Rand {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { next, int: (n) => Math.floor(next() * n), pick: (xs) => xs[Math.floor(next() * xs.length)]! };
}

/** Open file descriptors of this process. */
export async function openFds(): Promise<number> {
  const { readdir } = await import("node:fs/promises");
  return (await readdir("/proc/self/fd")).length;
}
