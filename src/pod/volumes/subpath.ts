// volumeMounts[].subPath / subPathExpr (upstream kubelet_pods.go makeMounts, ExpandContainerVolumeMounts,
// pkg/volume/util/subpath SafeMakeDir): the sub path is relative and has no "..";
// it is created inside the volume when missing (one openat/mkdirat per component, safe-open.ts);
// after resolving symlinks it must still be inside the volume. The path this returns is for checks
// and logs only: what a runtime mounts is the bind mount of an fd held on it (subpath-bind.ts
// prepareSafeSubPath), so a symlink swapped in after the check is never followed.
import { existsSync, realpathSync, statSync } from "node:fs";
import { dirname, isAbsolute, join, relative, sep } from "node:path";
import { kv, log } from "../../log.ts";
import { safeMakeDir } from "./safe-open.ts";

/** upstream ValidatePathNoBacksteps. */
export function hasBacksteps(p: string): boolean {
  return p.split("/").includes("..");
}

/** Pure checks of a sub path (upstream makeMounts' first steps); undefined when fine. */
export function subPathError(subPath: string): string | undefined {
  if (isAbsolute(subPath)) return `error SubPath \`${subPath}\` must not be an absolute path`;
  if (hasBacksteps(subPath)) return `unable to provision SubPath \`${subPath}\`: must not contain '..'`;
  return undefined;
}

/** upstream ExpandContainerVolumeMounts: $(VAR) from the container's env; a missing or empty one is an error. */
export function expandSubPathExpr(expr: string, env: Record<string, string>): string {
  const missing = new Set<string>();
  const out = expr.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)/g, (m, name: string | undefined) => {
    if (m === "$$") return "$";
    const v = env[name as string];
    if (!v) missing.add(name as string);
    return v ?? "";
  });
  if (missing.size > 0) throw new Error(`missing value for ${[...missing].sort().join(", ")}`);
  return out;
}

/** upstream PathWithinBase. */
const within = (root: string, p: string) => p === root || p.startsWith(root.endsWith(sep) ? root : root + sep);

/**
 * The resolved host path of `subPath` of the volume at `volumePath`: created (with the volume's
 * mode) when missing, resolved, and refused unless it stays inside the volume. Never hand it to a
 * runtime — by then it may be a symlink; prepareSafeSubPath mounts what it names. Errors are
 * upstream's (the detail, which names host paths, goes to the log only, as upstream).
 */
export function prepareSubPath(volumePath: string, subPath: string, mountName: string, containerName: string): string {
  const err = subPathError(subPath);
  if (err) throw new Error(err);
  const root = realpathSync(volumePath);
  const target = join(volumePath, subPath);
  if (!existsSync(target)) {
    // SafeMakeDir: the deepest existing ancestor must be inside the volume before anything is created.
    let anc = dirname(target);
    while (!existsSync(anc)) anc = dirname(anc);
    const realAnc = realpathSync(anc);
    const refuse = (error?: string): never => {
      log.warn(
        `${error ? "subPath directory not created" : "subPath escapes its volume"} ${kv({ container: containerName, volumeMount: mountName, subPath, volume: volumePath, error })}`,
      );
      throw new Error(`failed to create subPath directory for volumeMount "${mountName}" of container "${containerName}"`);
    };
    if (!within(root, realAnc)) refuse();
    try {
      safeMakeDir(root, join(relative(root, realAnc), relative(anc, target)), statSync(volumePath).mode & 0o7777);
    } catch (e) {
      refuse((e as Error).message);
    }
  }
  const resolved = realpathSync(target);
  if (!within(root, resolved)) {
    log.warn(`subPath escapes its volume ${kv({ container: containerName, volumeMount: mountName, subPath, resolved, volume: root })}`);
    throw new Error(`failed to prepare subPath for volumeMount "${mountName}" of container "${containerName}"`);
  }
  return relative(root, resolved) === "" ? root : resolved;
}
