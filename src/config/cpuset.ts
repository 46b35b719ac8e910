// CPU sets as upstream k8s.io/utils/cpuset (reservedSystemCPUs, the CPU manager): a set of CPU ids, parsed from and printed as the Linux
// list format ("0-3,7"). Plain sorted number arrays, so equality is element-wise and printing is stable.

/** A sorted, duplicate-free list of CPU ids. */
export type CPUSet = readonly number[];

/** The set of `ids` (any order, duplicates dropped). */
export function cpuSet(...ids: number[]): CPUSet {
  return [...new Set(ids)].sort((a, b) => a - b);
}

function atoi(s: string): number {
  // strconv.Atoi: an optional sign and decimal digits, nothing else.
  if (!/^[+-]?\d+$/.test(s)) throw new Error(`strconv.Atoi: parsing ${JSON.stringify(s)}: invalid syntax`);
  return Number(s);
}

/** Upstream cpuset.Parse: "" is the empty set; "a-b" a range (a ≤ b); elements separated by ",". */
export function parseCPUSet(s: string): CPUSet {
  if (s === "") return [];
  const ids: number[] = [];
  for (const r of s.split(",")) {
    const dash = r.indexOf("-");
    if (dash < 0) {
      ids.push(atoi(r));
      continue;
    }
    const start = atoi(r.slice(0, dash));
    const end = atoi(r.slice(dash + 1));
    if (start > end) throw new Error(`invalid range ${JSON.stringify(r)} (${start} > ${end})`);
    for (let e = start; e <= end; e++) ids.push(e);
  }
  return cpuSet(...ids);
}

/** Upstream CPUSet.String: runs of consecutive ids as "a-b", others alone, joined by ",". */
export function formatCPUSet(set: CPUSet): string {
  const parts: string[] = [];
  for (let i = 0; i < set.length; ) {
    let j = i;
    while (j + 1 < set.length && set[j + 1] === set[j]! + 1) j++;
    parts.push(j === i ? String(set[i]) : `${set[i]}-${set[j]}`);
    i = j + 1;
  }
  return parts.join(",");
}

export function union(...sets: CPUSet[]): CPUSet {
  return cpuSet(...sets.flat());
}

export function difference(a: CPUSet, b: CPUSet): CPUSet {
  const drop = new Set(b);
  return a.filter((c) => !drop.has(c));
}

export function intersection(a: CPUSet, b: CPUSet): CPUSet {
  const keep = new Set(b);
  return a.filter((c) => keep.has(c));
}

export function equals(a: CPUSet, b: CPUSet): boolean {
  return a.length === b.length && a.every((c, i) => c === b[i]);
}

export function isSubsetOf(a: CPUSet, b: CPUSet): boolean {
  return difference(a, b).length === 0;
}
