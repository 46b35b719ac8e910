// bunlet protects itself from the kernel OOM killer the way the kubelet does (--oom-score-adj,
// default -999): the agent that evicts pods under memory pressure must be the last process to go.
// Lowering oom_score_adj needs CAP_SYS_RESOURCE; without it the write fails (EACCES) and we say so
// once and go on — the node still gets eviction, just without the self-protection.
import { readFileSync, writeFileSync } from "node:fs";
import { kv, log } from "../log.ts";

export interface OomScoreResult {
  requested: number;
  /** The value in effect afterwards (read back), when readable. */
  effective?: number;
  applied: boolean;
  error?: string;
}

export interface OomScoreIo {
  read(path: string): string;
  write(path: string, value: string): void;
}

const fsIo: OomScoreIo = {
  read: (p) => readFileSync(p, "utf8"),
  write: (p, v) => writeFileSync(p, v),
};

/** Writes `adj` to /proc/self/oom_score_adj (upstream oom.ApplyOOMScoreAdj(0, …)); never throws. */
export function applyOomScoreAdj(adj: number, io: OomScoreIo = fsIo, path = "/proc/self/oom_score_adj"): OomScoreResult {
  const readBack = (): number | undefined => {
    try {
      const n = Number(io.read(path).trim());
      return Number.isFinite(n) ? n : undefined;
    } catch {
      return undefined;
    }
  };
  if (!Number.isInteger(adj) || adj < -1000 || adj > 1000) {
    return { requested: adj, applied: false, effective: readBack(), error: `oomScoreAdj ${adj} is outside [-1000, 1000]` };
  }
  try {
    io.write(path, String(adj));
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    return { requested: adj, applied: false, effective: readBack(), error: err.code ?? err.message };
  }
  const effective = readBack();
  return { requested: adj, applied: effective === undefined || effective === adj, effective };
}

/** Applies and logs the outcome (one line). */
export function protectSelf(adj: number, io?: OomScoreIo): OomScoreResult {
  const r = applyOomScoreAdj(adj, io);
  if (r.applied) log.info(`oom_score_adj set for the bunlet process ${kv({ value: r.effective ?? adj })}`);
  else
    log.warn(
      `could not set oom_score_adj for the bunlet process; the kernel OOM killer may pick bunlet under pressure ${kv({ requested: adj, effective: r.effective, error: r.error, hint: r.error === "EACCES" || r.error === "EPERM" ? "lowering it needs CAP_SYS_RESOURCE" : undefined })}`,
    );
  return r;
}
