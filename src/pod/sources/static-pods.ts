// What both static pod sources do to decoded pods before the config mux sees them: upstream's
// validation after defaults (src/pod/validation), the duplicate-name filter naming where each copy
// came from, and keeping the previous version of a manifest whose new version is invalid (so an edit
// that adds one unsupported field does not kill the running pod).
import { ManifestError } from "../manifest.ts";
import type { Pod } from "../types.ts";
import { validatePod } from "../validation/index.ts";
import { podKey } from "../pod-like.ts";

/** Splits defaulted pods into valid ones and ManifestErrors of `location`. */
export function validateStaticPods(pods: Pod[], location: string): { pods: Pod[]; errors: ManifestError[] } {
  const out: { pods: Pod[]; errors: ManifestError[] } = { pods: [], errors: [] };
  for (const pod of pods) {
    const errs = validatePod(pod);
    if (errs.length === 0) out.pods.push(pod);
    else out.errors.push(...errs.map((e) => new ManifestError(location, e.field, e.detail)));
  }
  return out;
}

/**
 * Upstream filterInvalidPods, per source: the second pod with a namespace/name already taken is
 * refused as `metadata.name: Duplicate value`, naming both manifests. `where` is in input order.
 */
export function dropDuplicateNames(entries: { pod: Pod; location: string }[]): { pods: Pod[]; errors: ManifestError[] } {
  const seen = new Map<string, string>();
  const out: { pods: Pod[]; errors: ManifestError[] } = { pods: [], errors: [] };
  for (const { pod, location } of entries) {
    const key = podKey(pod);
    const first = seen.get(key);
    if (first !== undefined) {
      out.errors.push(new ManifestError(location, "metadata.name", `Duplicate value: "${key}": the pod name is already used by ${first}`));
      continue;
    }
    seen.set(key, location);
    out.pods.push(pod);
  }
  return out;
}

/**
 * Remembers each manifest's last fully valid pods. A manifest whose new version has errors keeps
 * its previous pods (reported once per version), so an invalid edit never stops what runs.
 */
export function createLastGood(onKeep: (location: string, pods: Pod[], errors: ManifestError[]) => void) {
  const lastGood = new Map<string, Pod[]>();
  return {
    /** Pods to use for `location` now; `present` = every location read this round (others are forgotten). */
    resolve(location: string, pods: Pod[], errors: ManifestError[]): Pod[] {
      const prev = lastGood.get(location);
      if (errors.length === 0) {
        lastGood.set(location, pods);
        return pods;
      }
      if (prev && prev.length > 0) {
        onKeep(location, prev, errors);
        return prev;
      }
      return pods;
    },
    forgetExcept(present: Set<string>) {
      for (const k of lastGood.keys()) if (!present.has(k)) lastGood.delete(k);
    },
  };
}
