// The Secrets a CSI driver gets with NodeStageVolume and NodePublishVolume (upstream pkg/volume/csi
// csi_util.go getCredentialsFromSecret, called by csi_attacher.go MountDevice and csi_mounter.go
// SetUpAt): a GET of the Secret the volume names, its data values handed over as strings. The values
// are never logged or put in an error; only the reference (namespace/name) is.
import { z } from "zod";
import type { SecretRef } from "./volume-spec.ts";

/** The part of a core/v1 Secret a driver gets: its data, base64 as the API serves it. */
export const credentialsSecretSchema = z.looseObject({ data: z.record(z.string(), z.string()).nullish() });

/** upstream getCredentialsFromSecret's loop: every data value as a string (string(value) of its bytes). */
export function secretCredentials(secret: z.infer<typeof credentialsSecretSchema>): Record<string, string> {
  return Object.fromEntries(Object.entries(secret.data ?? {}).map(([k, v]) => [k, Buffer.from(v, "base64").toString("utf8")]));
}

/** A GET of an API object: undefined when it does not exist (404). */
export type GetObject = (path: string) => Promise<unknown>;

/** The API path of a Secret. */
export const secretPath = (ref: SecretRef) => `/api/v1/namespaces/${encodeURIComponent(ref.namespace)}/secrets/${encodeURIComponent(ref.name)}`;

/** The Secret an API path names (secretPath's inverse), or undefined for any other path: a cache can stand in for the read. */
export function secretRefOfPath(path: string): SecretRef | undefined {
  const m = /^\/api\/v1\/namespaces\/([^/?]+)\/secrets\/([^/?]+)$/.exec(path);
  return m ? { namespace: decodeURIComponent(m[1]!), name: decodeURIComponent(m[2]!) } : undefined;
}

/**
 * upstream getCredentialsFromSecret: the Secret's data; a Secret that cannot be read fails with
 * upstream's text (`kubernetes.io/csi: failed to find the secret <name> in the namespace <ns> with
 * error: <why>`), which the caller prefixes with the field that names it.
 */
export async function getCredentialsFromSecret(getObject: GetObject | undefined, ref: SecretRef): Promise<Record<string, string>> {
  const failed = (why: string) => new Error(`kubernetes.io/csi: failed to find the secret ${ref.name} in the namespace ${ref.namespace} with error: ${why}`);
  if (!getObject) throw failed("failed to get a kubernetes client");
  let obj: unknown;
  try {
    obj = await getObject(secretPath(ref));
  } catch (e) {
    throw failed((e as Error).message);
  }
  if (obj === undefined) throw failed(`secrets "${ref.name}" not found`);
  const parsed = credentialsSecretSchema.safeParse(obj);
  if (!parsed.success) throw failed("the API server's answer is not a Secret with string data");
  return secretCredentials(parsed.data);
}

/** The secrets of a NodeStageVolume/NodePublishVolume call: none without a reference, else the Secret's, or upstream's error for `field`. */
export async function volumeSecrets(
  getObject: GetObject | undefined,
  field: "NodeStageSecretRef" | "NodePublishSecretRef",
  ref: SecretRef | undefined,
): Promise<Record<string, string> | undefined> {
  if (!ref) return undefined;
  try {
    return await getCredentialsFromSecret(getObject, ref);
  } catch (e) {
    throw new Error(`fetching ${field} ${ref.namespace}/${ref.name} failed: ${(e as Error).message}`);
  }
}
