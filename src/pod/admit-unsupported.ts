// API pods asking for something bunlet cannot do (a field value schema/unsupported.ts refuses, say
// pod-level resources). The API server accepted them, so the kubelet owns telling the user: as upstream's
// admit handlers do for a pod feature the node cannot serve (lifecycle.PodFeatureUnsupported, e.g.
// NodeDeclaredFeatures, cgroup mount modes), the pod is rejected at admission — phase Failed, that
// reason, a message naming the field, the value and why, a Warning event — instead of being dropped
// unseen. The API source cannot decode such a pod into our Pod type, so it hands over a stand-in (the
// metadata and the containers' name/image only) carrying the decode errors in an annotation that only
// this handler reads; the stand-in never reaches a pod worker.
import type { PodAdmitHandler } from "./lifecycle-types.ts";
import type { ManifestError } from "./manifest.ts";

/** Upstream lifecycle.PodFeatureUnsupported. */
export const POD_FEATURE_UNSUPPORTED = "PodFeatureUnsupported";

/** Internal annotation of the stand-in (set by the API source, read by the admit handler below). */
export const UNSUPPORTED_SPEC_ANNOTATION = "bunlet.internal/unsupported-pod-spec";

/** The rejection message for a pod's decode errors: each field and why, "; "-separated. */
export function unsupportedSpecMessage(errors: ManifestError[]): string {
  return errors.map((e) => (e.field ? `${e.field}: ${e.detail}` : e.detail)).join("; ");
}

/**
 * The stand-in object (raw API form) for a pod that did not decode: the metadata the kubelet keeps,
 * nodeName, restartPolicy, terminationGracePeriodSeconds and each container's name and image.
 */
export function unsupportedStandIn(view: unknown, errors: ManifestError[]): unknown {
  const o = view as { metadata?: Record<string, unknown>; spec?: Record<string, unknown> };
  const spec = o?.spec && typeof o.spec === "object" ? o.spec : {};
  const str = (v: unknown) => (typeof v === "string" ? v : undefined);
  const containers = (Array.isArray(spec.containers) ? spec.containers : []).map((c: unknown, i: number) => {
    const x = (c && typeof c === "object" ? c : {}) as Record<string, unknown>;
    return { name: str(x.name) ?? `container-${i}`, image: str(x.image) ?? "unknown" };
  });
  const annotations = {
    ...((o?.metadata?.annotations as Record<string, string> | undefined) ?? {}),
    [UNSUPPORTED_SPEC_ANNOTATION]: unsupportedSpecMessage(errors),
  };
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { ...o?.metadata, annotations },
    spec: {
      nodeName: str(spec.nodeName),
      restartPolicy: str(spec.restartPolicy),
      terminationGracePeriodSeconds: typeof spec.terminationGracePeriodSeconds === "number" ? spec.terminationGracePeriodSeconds : undefined,
      containers: containers.length ? containers : [{ name: "container-0", image: "unknown" }],
    },
  };
}

/** Rejects the stand-ins: Failed / PodFeatureUnsupported, the fields as message. */
export const unsupportedSpecAdmitHandler: PodAdmitHandler = (pod) => {
  const why = pod.metadata.annotations?.[UNSUPPORTED_SPEC_ANNOTATION];
  if (why === undefined) return { admit: true };
  return { admit: false, reason: POD_FEATURE_UNSUPPORTED, message: `Pod uses fields bunlet does not support: ${why}` };
};
