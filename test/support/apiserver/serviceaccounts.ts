// Service accounts as kube-apiserver and kube-controller-manager give them to pods (test double):
//   - admission (plugin/pkg/admission/serviceaccount): a pod without serviceAccountName gets "default";
//     the account must exist; its imagePullSecrets are copied to a pod without any; unless
//     automountServiceAccountToken is false (pod, else account), the projected `kube-api-access-<5>`
//     volume (token 3607 s + kube-root-ca.crt + namespace) is added and mounted read-only at
//     /var/run/secrets/kubernetes.io/serviceaccount in every container. Mirror pods are not touched,
//     and may reference no service account, secret or token projection.
//   - controllers: every namespace gets the "default" ServiceAccount (serviceaccounts-controller) and
//     the "kube-root-ca.crt" ConfigMap with the cluster CA (root-ca-cert-publisher).
//   - TokenRequest (serviceaccounts/<name>/token): a signed JWT bound to the pod, audiences default to
//     the API server's, expirationSeconds default 3600 and at least 600.
import { createHmac, randomBytes, randomUUID } from "node:crypto";
import { ApiStatus, badRequest } from "./status.ts";
import type { Obj, Store } from "./store.ts";

export const API_AUDIENCE = "https://kubernetes.default.svc.cluster.local";
const MOUNT_PATH = "/var/run/secrets/kubernetes.io/serviceaccount";
const MIRROR = "kubernetes.io/config.mirror";
const now = () => new Date().toISOString().replace(/\.\d+Z$/, "Z");
const forbidden = (_ns: string, name: string, why: string) => new ApiStatus(403, "Forbidden", `pods "${name}" is forbidden: ${why}`, { name, kind: "pods" });

/** utilrand.String's alphabet (no vowels, no confusable digits). */
function randSuffix(n: number): string {
  const alphabet = "bcdfghjklmnpqrstvwxz2456789";
  return [...randomBytes(n)].map((b) => alphabet[b % alphabet.length]).join("");
}

function referencesSecrets(pod: Obj): boolean {
  const cs: Obj[] = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])];
  return (
    (pod.spec?.imagePullSecrets ?? []).length > 0 ||
    cs.some((c) => (c.envFrom ?? []).some((e: Obj) => e.secretRef) || (c.env ?? []).some((e: Obj) => e.valueFrom?.secretKeyRef)) ||
    (pod.spec?.volumes ?? []).some((v: Obj) => v.secret || (v.projected?.sources ?? []).some((s: Obj) => s.secret))
  );
}

/** ServiceAccount admission (mutating + validating) of a pod being created. */
export async function admitPod(store: Store, ns: string, pod: Obj): Promise<void> {
  const name = pod.metadata?.name ?? "";
  pod.spec ??= {};
  if (pod.metadata?.annotations?.[MIRROR] !== undefined) {
    if (pod.spec.serviceAccountName) throw forbidden(ns, name, "a mirror pod may not reference service accounts");
    if (referencesSecrets(pod)) throw forbidden(ns, name, "a mirror pod may not reference secrets");
    if ((pod.spec.volumes ?? []).some((v: Obj) => (v.projected?.sources ?? []).some((s: Obj) => s.serviceAccountToken)))
      throw forbidden(ns, name, "a mirror pod may not use ServiceAccountToken volume projections");
    return;
  }
  const saName = pod.spec.serviceAccountName || pod.spec.serviceAccount || "default";
  const sa = await store.get(`serviceaccounts/${ns}/${saName}`);
  if (!sa) throw forbidden(ns, name, `error looking up service account ${ns}/${saName}: serviceaccount "${saName}" not found`);
  pod.spec.serviceAccountName = saName;
  pod.spec.serviceAccount = saName; // v1's deprecated mirror of the field
  if (!(pod.spec.imagePullSecrets ?? []).length && (sa.imagePullSecrets ?? []).length)
    pod.spec.imagePullSecrets = sa.imagePullSecrets.map((s: Obj) => ({ name: s.name }));
  const automount = pod.spec.automountServiceAccountToken ?? sa.automountServiceAccountToken ?? true;
  if (!automount) return;
  const containers: Obj[] = [...(pod.spec.initContainers ?? []), ...(pod.spec.containers ?? [])];
  if (containers.some((c) => (c.volumeMounts ?? []).some((m: Obj) => m.mountPath === MOUNT_PATH))) return;
  const volName = `kube-api-access-${randSuffix(5)}`;
  pod.spec.volumes = [
    ...(pod.spec.volumes ?? []),
    {
      name: volName,
      projected: {
        defaultMode: 0o644,
        sources: [
          { serviceAccountToken: { expirationSeconds: 3607, path: "token" } },
          { configMap: { name: "kube-root-ca.crt", items: [{ key: "ca.crt", path: "ca.crt" }] } },
          { downwardAPI: { items: [{ path: "namespace", fieldRef: { apiVersion: "v1", fieldPath: "metadata.namespace" } }] } },
        ],
      },
    },
  ];
  for (const c of containers) c.volumeMounts = [...(c.volumeMounts ?? []), { name: volName, readOnly: true, mountPath: MOUNT_PATH }];
}

/** serviceaccounts-controller + root-ca-cert-publisher for one namespace. */
export async function ensureNamespaceDefaults(store: Store, ns: string, caPem: string): Promise<void> {
  const meta = (name: string) => ({ name, namespace: ns, uid: randomUUID(), creationTimestamp: now() });
  if (!(await store.get(`serviceaccounts/${ns}/default`)))
    await store.put(`serviceaccounts/${ns}/default`, { kind: "ServiceAccount", apiVersion: "v1", metadata: meta("default") }, 0);
  if (!(await store.get(`configmaps/${ns}/kube-root-ca.crt`)))
    await store.put(
      `configmaps/${ns}/kube-root-ca.crt`,
      {
        kind: "ConfigMap",
        apiVersion: "v1",
        metadata: {
          ...meta("kube-root-ca.crt"),
          annotations: {
            "kubernetes.io/description":
              "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.",
          },
        },
        data: { "ca.crt": caPem },
      },
      0,
    );
}

const b64url = (b: Buffer | string) => Buffer.from(b).toString("base64url");

/** A token signer: HS256 JWTs with the claims kube-apiserver's bound tokens carry. */
export function createTokenIssuer() {
  const key = randomBytes(32);
  return {
    sign(claims: Obj): string {
      const head = b64url(JSON.stringify({ alg: "HS256", kid: "bunlet-double" }));
      const body = b64url(JSON.stringify(claims));
      return `${head}.${body}.${b64url(createHmac("sha256", key).update(`${head}.${body}`).digest())}`;
    },
    /** The claims of a token this issuer signed, undefined otherwise. */
    verify(token: string): Obj | undefined {
      const [h, b, sig] = token.split(".");
      if (!h || !b || !sig || b64url(createHmac("sha256", key).update(`${h}.${b}`).digest()) !== sig) return undefined;
      return JSON.parse(Buffer.from(b, "base64url").toString("utf8"));
    },
  };
}
export type TokenIssuer = ReturnType<typeof createTokenIssuer>;

/** POST serviceaccounts/<name>/token (registry/core/serviceaccount/storage/token.go). */
export async function createToken(
  store: Store,
  issuer: TokenIssuer,
  ns: string,
  saName: string,
  body: Obj | undefined,
): Promise<{ code: number; body: unknown }> {
  if (body?.kind && body.kind !== "TokenRequest") throw badRequest(`expected TokenRequest, got ${body.kind}`);
  const sa = await store.get(`serviceaccounts/${ns}/${saName}`);
  if (!sa) throw new ApiStatus(404, "NotFound", `serviceaccounts "${saName}" not found`, { name: saName, kind: "serviceaccounts" });
  const spec = body?.spec ?? {};
  const exp = spec.expirationSeconds ?? 3600;
  if (exp < 600)
    throw new ApiStatus(
      422,
      "Invalid",
      `TokenRequest.authentication.k8s.io "${saName}" is invalid: spec.expirationSeconds: Invalid value: ${exp}: may not specify a duration less than 10 minutes`,
    );
  const ref = spec.boundObjectRef;
  let pod: Obj | undefined;
  if (ref) {
    if (ref.kind !== "Pod" && ref.kind !== "Secret" && ref.kind !== "Node")
      throw badRequest(`cannot bind token for serviceaccount "${saName}" to object of type ${ref.kind}`);
    if (ref.kind === "Pod") {
      pod = await store.get(`pods/${ns}/${ref.name}`);
      if (!pod) throw new ApiStatus(404, "NotFound", `pods "${ref.name}" not found`, { name: ref.name, kind: "pods" });
      if (ref.uid && ref.uid !== pod.metadata.uid)
        throw new ApiStatus(
          409,
          "Conflict",
          `Operation cannot be fulfilled on pods "${ref.name}": the UID in the bound object reference (${ref.uid}) does not match the UID in record. The object might have been deleted and then recreated`,
        );
    }
  }
  const iat = Math.floor(Date.now() / 1000);
  const audiences: string[] = spec.audiences?.length ? spec.audiences : [API_AUDIENCE];
  const token = issuer.sign({
    aud: audiences,
    exp: iat + exp,
    iat,
    nbf: iat,
    iss: API_AUDIENCE,
    jti: randomUUID(),
    "kubernetes.io": {
      namespace: ns,
      serviceaccount: { name: saName, uid: sa.metadata.uid },
      ...(pod ? { pod: { name: pod.metadata.name, uid: pod.metadata.uid }, node: pod.spec?.nodeName ? { name: pod.spec.nodeName } : undefined } : {}),
    },
    sub: `system:serviceaccount:${ns}:${saName}`,
  });
  return {
    code: 201,
    body: {
      kind: "TokenRequest",
      apiVersion: "authentication.k8s.io/v1",
      metadata: { name: saName, namespace: ns, creationTimestamp: null },
      spec: { audiences, expirationSeconds: exp, boundObjectRef: ref ?? null },
      status: { token, expirationTimestamp: new Date((iat + exp) * 1000).toISOString().replace(/\.\d+Z$/, "Z") },
    },
  };
}
