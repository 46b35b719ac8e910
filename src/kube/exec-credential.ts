// Exec credential plugins as client-go runs them (client-go/plugin/pkg/client/auth/exec): the
// command runs with KUBERNETES_EXEC_INFO describing the request, prints an ExecCredential whose
// status holds a token or a client certificate/key; the result is cached until its
// expirationTimestamp, and run again after a 401.
import { z } from "zod";
import type { Clock } from "../clock.ts";
import type { ExecConfig } from "./kubeconfig.ts";
import { parseJsonQuietly } from "../json.ts";

const execCredentialSchema = z.object({
  apiVersion: z.string(),
  kind: z.literal("ExecCredential"),
  status: z.object({
    token: z.string().nullish(),
    clientCertificateData: z.string().nullish(),
    clientKeyData: z.string().nullish(),
    expirationTimestamp: z.string().nullish(),
  }),
});

export interface ExecCredential {
  token?: string;
  certPem?: string;
  keyPem?: string;
  /** Epoch ms; undefined → valid until a 401. */
  expiresAtMs?: number;
}

export class ExecCredentialError extends Error {}

export async function runExecPlugin(exec: ExecConfig, cluster: { server: string; caPem?: string }): Promise<ExecCredential> {
  const info = {
    apiVersion: exec.apiVersion,
    kind: "ExecCredential",
    spec: { interactive: false, ...(exec.provideClusterInfo ? { cluster: { server: cluster.server, ...(cluster.caPem ? { "certificate-authority-data": Buffer.from(cluster.caPem).toString("base64") } : {}) } } : {}) },
  };
  const env: Record<string, string> = { ...(process.env as Record<string, string>), KUBERNETES_EXEC_INFO: JSON.stringify(info) };
  for (const e of exec.env ?? []) env[e.name] = e.value;
  let proc;
  try {
    proc = Bun.spawn([exec.command, ...(exec.args ?? [])], { env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  } catch (e) {
    throw new ExecCredentialError(`exec plugin: invalid apiVersion or command ${exec.command}: ${(e as Error).message}${exec.installHint ? `\n${exec.installHint}` : ""}`);
  }
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new ExecCredentialError(`exec: executable ${exec.command} failed with exit code ${code}: ${err.trim()}`);
  let parsed;
  try {
    parsed = execCredentialSchema.parse(parseJsonQuietly(out, "ExecCredential"));
  } catch (e) {
    throw new ExecCredentialError(`exec: decoding stdout of ${exec.command}: ${(e as Error).message}`);
  }
  if (parsed.apiVersion !== exec.apiVersion) throw new ExecCredentialError(`exec plugin is configured to use API version ${exec.apiVersion}, plugin returned version ${parsed.apiVersion}`);
  const s = parsed.status;
  if (!s.token && !(s.clientCertificateData && s.clientKeyData)) throw new ExecCredentialError(`exec plugin ${exec.command} returned no token and no client certificate`);
  return {
    ...(s.token ? { token: s.token } : {}),
    ...(s.clientCertificateData ? { certPem: s.clientCertificateData, keyPem: s.clientKeyData! } : {}),
    ...(s.expirationTimestamp ? { expiresAtMs: Date.parse(s.expirationTimestamp) } : {}),
  };
}

/** Caches the plugin's credential until it expires or is invalidated (after a 401). */
export function execCredentialSource(exec: ExecConfig, cluster: { server: string; caPem?: string }, clock: Clock) {
  let cached: ExecCredential | undefined;
  let pending: Promise<ExecCredential> | undefined;
  return {
    async get(): Promise<ExecCredential> {
      if (cached && (cached.expiresAtMs === undefined || cached.expiresAtMs > clock.now())) return cached;
      pending ??= runExecPlugin(exec, cluster).finally(() => (pending = undefined));
      cached = await pending;
      return cached;
    },
    invalidate() {
      cached = undefined;
    },
  };
}
