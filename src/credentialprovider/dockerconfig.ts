// Registry credentials from image pull secrets (upstream pkg/credentialprovider config.go and
// secrets/secrets.go): `kubernetes.io/dockerconfigjson` secrets carry `.dockerconfigjson`
// ({"auths": {registry: entry}}), legacy `kubernetes.io/dockercfg` ones `.dockercfg` ({registry: entry}).
// An entry's `auth` (base64 "user:password") wins over its username/password, as docker's does.
import { z } from "zod";
import { parseJsonRedacted } from "../json-redacted.ts";

export interface DockerConfigEntry {
  username: string;
  password: string;
  email?: string;
}
export type DockerConfig = Record<string, DockerConfigEntry>;

const entrySchema = z.looseObject({
  username: z.string().optional(),
  password: z.string().optional(),
  email: z.string().optional(),
  auth: z.string().optional(),
});
const configSchema = z.record(z.string(), entrySchema);
const configJsonSchema = z.looseObject({ auths: configSchema.optional() });

/** upstream decodeDockerConfigFieldAuth. */
export function decodeAuthField(auth: string): { username: string; password: string } {
  const text = Buffer.from(auth, "base64").toString("utf8");
  const i = text.indexOf(":");
  if (i < 0) throw new Error("unable to parse auth field, must be formatted as base64(username:password)");
  return { username: text.slice(0, i), password: text.slice(i + 1) };
}

function toConfig(raw: z.output<typeof configSchema>, what: string): DockerConfig {
  const out: DockerConfig = {};
  for (const [registry, e] of Object.entries(raw)) {
    let { username = "", password = "" } = e;
    if (e.auth) {
      try {
        ({ username, password } = decodeAuthField(e.auth));
      } catch (err) {
        throw new Error(`${what}: registry "${registry}": ${(err as Error).message}`);
      }
    }
    out[registry] = { username, password, ...(e.email ? { email: e.email } : {}) };
  }
  return out;
}

/** The error names the secret and the size, never the content (parseJsonRedacted). */
const parseJson = (text: string, what: string): unknown => parseJsonRedacted(text, what);

/** `.dockerconfigjson` contents. */
export function parseDockerConfigJson(text: string, what = ".dockerconfigjson"): DockerConfig {
  const r = configJsonSchema.safeParse(parseJson(text, what));
  if (!r.success) throw new Error(`${what}: ${r.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
  return toConfig(r.data.auths ?? {}, what);
}

/** Legacy `.dockercfg` contents. */
export function parseDockerCfg(text: string, what = ".dockercfg"): DockerConfig {
  const r = configSchema.safeParse(parseJson(text, what));
  if (!r.success) throw new Error(`${what}: ${r.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
  return toConfig(r.data, what);
}

/** Docker configs of pull secrets (their `data`, base64 as the API serves it); bad ones are reported and skipped. */
export function dockerConfigsFromSecrets(
  secrets: readonly { name: string; data?: Record<string, string> }[],
  onError: (e: Error) => void = () => {},
): DockerConfig[] {
  const out: DockerConfig[] = [];
  for (const s of secrets) {
    const data = s.data ?? {};
    for (const [key, parse] of [
      [".dockercfg", parseDockerCfg],
      [".dockerconfigjson", parseDockerConfigJson],
    ] as const) {
      const b64 = data[key];
      if (b64 === undefined) continue;
      try {
        out.push(parse(Buffer.from(b64, "base64").toString("utf8"), `secret "${s.name}" ${key}`));
      } catch (e) {
        onError(e as Error);
      }
    }
  }
  return out;
}
