// kubeconfig files as client-go's tools/clientcmd reads them: clusters/users/contexts, the current
// context, file references resolved relative to the kubeconfig's directory, *-data fields base64.
// The result is a RestConfig: where the API server is and how to prove who we are.
import { readFile } from "node:fs/promises";
import { dirname, isAbsolute, resolve } from "node:path";
import { parse as parseYaml } from "yaml";
import { z } from "zod";

const execSchema = z.object({
  command: z.string().min(1),
  args: z.array(z.string()).nullish(),
  env: z.array(z.object({ name: z.string(), value: z.string() })).nullish(),
  apiVersion: z.string(),
  installHint: z.string().nullish(),
  provideClusterInfo: z.boolean().nullish(),
  interactiveMode: z.string().nullish(),
});

const kubeconfigSchema = z.object({
  "current-context": z.string().nullish(),
  clusters: z
    .array(
      z.object({
        name: z.string(),
        cluster: z.object({
          server: z.string().min(1),
          "certificate-authority": z.string().nullish(),
          "certificate-authority-data": z.string().nullish(),
          "insecure-skip-tls-verify": z.boolean().nullish(),
          "tls-server-name": z.string().nullish(),
        }),
      }),
    )
    .nullish(),
  users: z
    .array(
      z.object({
        name: z.string(),
        user: z
          .object({
            "client-certificate": z.string().nullish(),
            "client-certificate-data": z.string().nullish(),
            "client-key": z.string().nullish(),
            "client-key-data": z.string().nullish(),
            token: z.string().nullish(),
            tokenFile: z.string().nullish(),
            exec: execSchema.nullish(),
          })
          .nullish(),
      }),
    )
    .nullish(),
  contexts: z
    .array(
      z.object({
        name: z.string(),
        context: z.object({ cluster: z.string(), user: z.string().nullish(), namespace: z.string().nullish() }),
      }),
    )
    .nullish(),
});

export type ExecConfig = z.infer<typeof execSchema>;

export interface RestConfig {
  /** Base URL without a trailing slash. */
  server: string;
  /** PEM CA bundle; undefined → the system roots. */
  caPem?: string;
  insecureSkipTLSVerify?: boolean;
  tlsServerName?: string;
  certPem?: string;
  keyPem?: string;
  /** Files the cert/key came from (cert rotation rewrites them). */
  certFile?: string;
  keyFile?: string;
  token?: string;
  tokenFile?: string;
  exec?: ExecConfig;
  /** Where the config came from, for error messages. */
  source: string;
}

export class KubeconfigError extends Error {
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(`invalid kubeconfig ${path}: ${message}`);
  }
}

const b64 = (s: string) => Buffer.from(s, "base64").toString("utf8");

export async function loadKubeconfig(path: string): Promise<RestConfig> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (e) {
    throw new KubeconfigError(path, (e as Error).message);
  }
  return parseKubeconfig(text, path);
}

export async function parseKubeconfig(text: string, path: string): Promise<RestConfig> {
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (e) {
    throw new KubeconfigError(path, (e as Error).message);
  }
  const parsed = kubeconfigSchema.safeParse(raw ?? {});
  if (!parsed.success) {
    const i = parsed.error.issues[0]!;
    throw new KubeconfigError(path, `field ${i.path.join(".")}: ${i.message}`);
  }
  const kc = parsed.data;
  const ctxName = kc["current-context"];
  const ctx = kc.contexts?.find((c) => c.name === ctxName)?.context ?? (kc.contexts?.length === 1 ? kc.contexts[0]!.context : undefined);
  if (!ctx) throw new KubeconfigError(path, ctxName ? `context "${ctxName}" not found` : "no current-context");
  const cluster = kc.clusters?.find((c) => c.name === ctx.cluster)?.cluster;
  if (!cluster) throw new KubeconfigError(path, `cluster "${ctx.cluster}" not found`);
  const user = kc.users?.find((u) => u.name === ctx.user)?.user ?? {};
  const base = dirname(path);
  const abs = (p: string) => (isAbsolute(p) ? p : resolve(base, p));
  const file = async (p: string, field: string) => {
    try {
      return await readFile(abs(p), "utf8");
    } catch (e) {
      throw new KubeconfigError(path, `${field} ${abs(p)}: ${(e as Error).message}`);
    }
  };
  const cfg: RestConfig = { server: cluster.server.replace(/\/+$/, ""), source: path };
  if (cluster["certificate-authority-data"]) cfg.caPem = b64(cluster["certificate-authority-data"]);
  else if (cluster["certificate-authority"]) cfg.caPem = await file(cluster["certificate-authority"], "certificate-authority");
  if (cluster["insecure-skip-tls-verify"]) cfg.insecureSkipTLSVerify = true;
  if (cluster["tls-server-name"]) cfg.tlsServerName = cluster["tls-server-name"];
  if (user["client-certificate-data"]) cfg.certPem = b64(user["client-certificate-data"]);
  else if (user["client-certificate"]) {
    cfg.certFile = abs(user["client-certificate"]);
    cfg.certPem = await file(user["client-certificate"], "client-certificate");
  }
  if (user["client-key-data"]) cfg.keyPem = b64(user["client-key-data"]);
  else if (user["client-key"]) {
    cfg.keyFile = abs(user["client-key"]);
    cfg.keyPem = await file(user["client-key"], "client-key");
  }
  if (!!cfg.certPem !== !!cfg.keyPem) throw new KubeconfigError(path, "client-certificate and client-key must be given together");
  if (user.token) cfg.token = user.token;
  if (user.tokenFile) cfg.tokenFile = abs(user.tokenFile);
  if (user.exec) cfg.exec = user.exec;
  return cfg;
}

/** A kubeconfig (YAML) pointing at a client cert/key on disk, as the kubelet writes after TLS bootstrap. */
export function renderKubeconfig(opts: { server: string; caPem?: string; insecureSkipTLSVerify?: boolean; certFile: string; keyFile: string }): string {
  const cluster = opts.caPem
    ? `    certificate-authority-data: ${Buffer.from(opts.caPem).toString("base64")}\n`
    : opts.insecureSkipTLSVerify
      ? "    insecure-skip-tls-verify: true\n"
      : "";
  return `apiVersion: v1
kind: Config
clusters:
- cluster:
${cluster}    server: ${opts.server}
  name: default-cluster
contexts:
- context:
    cluster: default-cluster
    namespace: default
    user: default-auth
  name: default-context
current-context: default-context
preferences: {}
users:
- name: default-auth
  user:
    client-certificate: ${opts.certFile}
    client-key: ${opts.keyFile}
`;
}
