// The API objects a pod references (upstream pkg/api/v1/pod VisitPodSecretNames /
// VisitPodConfigmapNames, pkg/api/pod HasAPIObjectReference): secrets (imagePullSecrets, envFrom
// secretRef, env secretKeyRef, secret and projected secret volumes), configMaps (the same for
// configMaps), the service account and persistentVolumeClaims. The kubelet refuses a static pod that references any of them
// ("static pods may not reference secrets"): it runs before, and without, the API server.

export interface RefContainer {
  env?: { valueFrom?: { secretKeyRef?: { name?: string }; configMapKeyRef?: { name?: string } } }[];
  envFrom?: { secretRef?: { name?: string }; configMapRef?: { name?: string } }[];
}
export interface RefVolume {
  secret?: { secretName?: string };
  persistentVolumeClaim?: unknown;
  ephemeral?: unknown;
  configMap?: { name?: string };
  projected?: { sources?: { secret?: { name?: string }; configMap?: { name?: string }; serviceAccountToken?: unknown; clusterTrustBundle?: unknown }[] };
}
export interface RefPod {
  spec: {
    containers: RefContainer[];
    initContainers?: RefContainer[];
    imagePullSecrets?: { name?: string }[];
    serviceAccountName?: string;
    /** Deprecated alias; v1 conversion copies it into serviceAccountName when that is empty. */
    serviceAccount?: string;
    volumes?: RefVolume[];
  };
}

const containersOf = (pod: RefPod) => [...(pod.spec.initContainers ?? []), ...pod.spec.containers];

/** Secret names the pod references, in the order upstream visits them. */
export function podSecretNames(pod: RefPod): string[] {
  const out = new Set<string>();
  const add = (n: string | undefined) => void (n && out.add(n));
  for (const s of pod.spec.imagePullSecrets ?? []) add(s.name);
  for (const c of containersOf(pod)) {
    for (const e of c.envFrom ?? []) add(e.secretRef?.name);
    for (const e of c.env ?? []) add(e.valueFrom?.secretKeyRef?.name);
  }
  for (const v of pod.spec.volumes ?? []) {
    add(v.secret?.secretName);
    for (const s of v.projected?.sources ?? []) add(s.secret?.name);
  }
  return [...out];
}

/** ConfigMap names the pod references. */
export function podConfigMapNames(pod: RefPod): string[] {
  const out = new Set<string>();
  const add = (n: string | undefined) => void (n && out.add(n));
  for (const c of containersOf(pod)) {
    for (const e of c.envFrom ?? []) add(e.configMapRef?.name);
    for (const e of c.env ?? []) add(e.valueFrom?.configMapKeyRef?.name);
  }
  for (const v of pod.spec.volumes ?? []) {
    add(v.configMap?.name);
    for (const s of v.projected?.sources ?? []) add(s.configMap?.name);
  }
  return [...out];
}

/**
 * The plural resource of the first API object the pod references (upstream HasAPIObjectReference's
 * wording, e.g. "secrets", "configmaps (via projected volumes)"), undefined when it references none.
 */
export function apiObjectReference(pod: RefPod): string | undefined {
  if (pod.spec.serviceAccountName || pod.spec.serviceAccount) return "serviceaccounts";
  if (podSecretNames(pod).length > 0 || (pod.spec.imagePullSecrets?.length ?? 0) > 0) return "secrets";
  if (podConfigMapNames(pod).length > 0) return "configmaps";
  for (const v of pod.spec.volumes ?? []) {
    if (v.configMap) return "configmaps (via configmap volumes)";
    if (v.secret) return "secrets (via secret volumes)";
    if (v.persistentVolumeClaim) return "persistentvolumeclaims";
    if (v.ephemeral) return "persistentvolumeclaims (via ephemeral volumes)";
    for (const s of v.projected?.sources ?? []) {
      if (s.configMap) return "configmaps (via projected volumes)";
      if (s.secret) return "secrets (via projected volumes)";
      if (s.serviceAccountToken) return "serviceaccounts (via projected volumes)";
      if (s.clusterTrustBundle) return "clustertrustbundles";
    }
  }
  return undefined;
}
