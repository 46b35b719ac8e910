// A container's environment (upstream kubelet_pods.go makeEnvironmentVariables): envFrom sources
// first, in order (prefix + key; keys that are not valid variable names are skipped and reported),
// then env in order, each value $(VAR)-expanded with the variables defined before it, or resolved
// from valueFrom (downward API, a configMap key, a secret key). An optional reference to a missing
// object or key sets nothing; a required one fails with upstream's message (the container then waits
// with CreateContainerConfigError). The service variables (envvars/) come last, those env does not
// define, and $(VAR) sees them too. Pure: the API objects and services were read for this sync.
import type { KeyValue } from "../../cri/types.ts";
import { expand, mappingFor } from "../expansion.ts";
import {
  fieldRefValue,
  findContainer,
  lookupConfigMap,
  lookupSecret,
  ObjectNotFoundError,
  resourceFieldRefValue,
  type DownwardContext,
  type PodApiObjects,
} from "../volumes/index.ts";
import type { KubeContainer, KubePod } from "./types.ts";

/** upstream validation.IsEnvVarName (relaxed form, KEP-4369): printable ASCII but '=', not empty. */
export const isEnvVarName = (k: string) => k.length > 0 && /^[\x20-\x3c\x3e-\x7e]+$/.test(k);

export interface EnvResult {
  envs: KeyValue[];
  /** upstream's InvalidEnvironmentVariableNames event messages. */
  warnings: string[];
}

const decode = (b64: string) => Buffer.from(b64, "base64").toString("utf8");

function optionalMissing(e: unknown, optional: boolean | undefined): boolean {
  return optional === true && e instanceof ObjectNotFoundError;
}

function envFromValues(pod: KubePod, c: KubeContainer, objs: PodApiObjects | undefined, env: Map<string, string>, warnings: string[]): void {
  const ns = pod.metadata.namespace ?? "";
  for (const from of c.envFrom ?? []) {
    const ref = from.configMapRef ?? from.secretRef;
    if (!ref) continue;
    const kind = from.configMapRef ? "configMap" : "secret";
    let values: Record<string, string>;
    try {
      values = from.configMapRef
        ? (lookupConfigMap(objs, ref.name ?? "").data ?? {})
        : Object.fromEntries(Object.entries(lookupSecret(objs, ref.name ?? "").data ?? {}).map(([k, v]) => [k, decode(v)]));
    } catch (e) {
      if (optionalMissing(e, ref.optional)) continue;
      throw e;
    }
    const invalid: string[] = [];
    for (const [key, v] of Object.entries(values)) {
      const k = (from.prefix ?? "") + key;
      if (!isEnvVarName(k)) invalid.push(k);
      else env.set(k, v);
    }
    if (invalid.length > 0)
      warnings.push(
        `Keys [${invalid.sort().join(", ")}] from the EnvFrom ${kind} ${ns}/${ref.name} were skipped since they are considered invalid environment variable names.`,
      );
  }
}

/** The value of one env entry; undefined when an optional reference resolves to nothing. */
function envValue(
  pod: KubePod,
  c: KubeContainer,
  e: NonNullable<KubeContainer["env"]>[number],
  env: Map<string, string>,
  ctx: DownwardContext,
  objs: PodApiObjects | undefined,
  serviceEnv: ReadonlyMap<string, string>,
): string | undefined {
  const ns = pod.metadata.namespace ?? "";
  const from = e.valueFrom;
  if (e.value) return expand(e.value, mappingFor(env, serviceEnv));
  if (!from) return "";
  if (from.fieldRef) return fieldRefValue(from.fieldRef.fieldPath, ctx);
  if (from.resourceFieldRef) {
    const target = findContainer(pod, from.resourceFieldRef.containerName || c.name);
    if (!target) throw new Error(`container "${from.resourceFieldRef.containerName}" not found`);
    return resourceFieldRefValue(from.resourceFieldRef, target, ctx);
  }
  const keyRef = from.configMapKeyRef ?? from.secretKeyRef;
  if (!keyRef) return "";
  try {
    if (from.configMapKeyRef) {
      const v = lookupConfigMap(objs, keyRef.name ?? "").data?.[keyRef.key];
      if (v === undefined && !keyRef.optional) throw new Error(`couldn't find key ${keyRef.key} in ConfigMap ${ns}/${keyRef.name}`);
      return v;
    }
    const v = lookupSecret(objs, keyRef.name ?? "").data?.[keyRef.key];
    if (v === undefined && !keyRef.optional) throw new Error(`couldn't find key ${keyRef.key} in Secret ${ns}/${keyRef.name}`);
    return v === undefined ? undefined : decode(v);
  } catch (err) {
    if (optionalMissing(err, keyRef.optional)) return undefined;
    throw err;
  }
}

/** upstream makeEnvironmentVariables; `serviceEnv` is the pod's service variables (upstream getServiceEnvVarMap). */
export function makeEnvironmentVariables(
  pod: KubePod,
  c: KubeContainer,
  ctx: DownwardContext,
  objs: PodApiObjects | undefined,
  serviceEnv: ReadonlyMap<string, string> = new Map(),
): EnvResult {
  const env = new Map<string, string>();
  const warnings: string[] = [];
  envFromValues(pod, c, objs, env, warnings);
  for (const e of c.env ?? []) {
    const v = envValue(pod, c, e, env, ctx, objs, serviceEnv);
    if (v !== undefined) env.set(e.name, v);
  }
  for (const [k, v] of serviceEnv) if (!env.has(k)) env.set(k, v);
  return { envs: [...env].map(([key, value]) => ({ key, value })), warnings };
}
