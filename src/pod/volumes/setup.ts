// Setting up the volumes bunlet prepares itself (emptyDir lives in kuberuntime/empty-dir.ts):
// hostPath (type checked), downwardAPI and projected (its downwardAPI sources; the others are refused
// at validation) under <rootDir>/pods/<uid>/volumes/<plugin>/<name>, as upstream lays them out.
import { join } from "node:path";
import { fieldRefValue, findContainer, resourceFieldRefValue, type DownwardContext, type ResourceFieldRef } from "./downward-api.ts";
import { checkHostPathType, type HostPathType } from "./host-path.ts";
import { type PayloadFile, writeAtomically } from "./atomic-writer.ts";

export interface DownwardApiItem {
  path: string;
  fieldRef?: { fieldPath: string; apiVersion?: string };
  resourceFieldRef?: ResourceFieldRef;
  mode?: number;
}

export interface PodVolumeSpec {
  name: string;
  hostPath?: { path: string; type?: string };
  downwardAPI?: { items?: DownwardApiItem[]; defaultMode?: number };
  projected?: { sources?: { downwardAPI?: { items?: DownwardApiItem[] } }[]; defaultMode?: number };
}

/** File contents of a downwardAPI volume (or projected source), by relative path. */
export function downwardApiPayload(items: readonly DownwardApiItem[], defaultMode: number | undefined, ctx: DownwardContext): Record<string, PayloadFile> {
  const out: Record<string, PayloadFile> = {};
  for (const it of items) {
    let content: string;
    if (it.fieldRef) content = fieldRefValue(it.fieldRef.fieldPath, ctx);
    else if (it.resourceFieldRef) {
      const c = findContainer(ctx.pod, it.resourceFieldRef.containerName);
      if (!c) throw new Error(`resourceFieldRef: container "${it.resourceFieldRef.containerName ?? ""}" not found in the pod`);
      content = resourceFieldRefValue(it.resourceFieldRef, c, ctx);
    } else continue;
    out[it.path] = { content, mode: it.mode ?? defaultMode ?? 0o644 };
  }
  return out;
}

const pluginDir = (rootDir: string, uid: string, plugin: string, name: string) => join(rootDir, "pods", uid, "volumes", plugin, name);

/**
 * The host path of a hostPath/downwardAPI/projected volume, set up (type check, files written);
 * undefined for other kinds. Throws upstream's error when set-up fails.
 */
export function setUpPodVolume(rootDir: string, v: PodVolumeSpec, ctx: DownwardContext): string | undefined {
  const uid = ctx.pod.metadata.uid ?? "";
  if (v.hostPath) {
    checkHostPathType(v.hostPath.path, v.hostPath.type as HostPathType | undefined);
    return v.hostPath.path;
  }
  if (v.downwardAPI) {
    const dir = pluginDir(rootDir, uid, "kubernetes.io~downward-api", v.name);
    writeAtomically(dir, downwardApiPayload(v.downwardAPI.items ?? [], v.downwardAPI.defaultMode, ctx));
    return dir;
  }
  if (v.projected) {
    const dir = pluginDir(rootDir, uid, "kubernetes.io~projected", v.name);
    const payload: Record<string, PayloadFile> = {};
    for (const s of v.projected.sources ?? []) Object.assign(payload, downwardApiPayload(s.downwardAPI?.items ?? [], v.projected.defaultMode, ctx));
    writeAtomically(dir, payload);
    return dir;
  }
  return undefined;
}
