// Exec credential plugins as client-go runs them (client-go/plugin/pkg/client/auth/exec): the
// command runs with KUBERNETES_EXEC_INFO describing the request, prints an ExecCredential whose
// status holds a token or a client certificate/key; the result is cached until its
// expirationTimestamp, and run again after a 401.
// Bounded where client-go is not: the plugin is killed past a timeout or past 1 MiB of stdout (an
// ExecCredential is a few KiB), and neither its stderr nor its stdout ever reaches an error message:
// both may hold the credential, and errors end up in logs.
import { z } from "zod";
import type { Clock } from "../clock.ts";
import { parseJsonRedacted } from "../json-redacted.ts";
import type { ExecConfig } from "./kubeconfig.ts";

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

/** How long a plugin may run, and how much stdout it may print, before it is killed. */
export const EXEC_PLUGIN_TIMEOUT_MS = 60_000;
export const EXEC_PLUGIN_MAX_STDOUT_BYTES = 1024 * 1024;

/** The stream's bytes up to `maxBytes`; undefined once it goes past (the rest is not read). */
async function readCapped(stream: ReadableStream<Uint8Array>, maxBytes: number): Promise<Buffer | undefined> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let n = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return Buffer.concat(chunks, n);
    n += value.byteLength;
    if (n > maxBytes) {
      await reader.cancel().catch(() => undefined);
      return undefined;
    }
    chunks.push(value);
  }
}

/** Bytes of a stream, counted and dropped (the plugin's stderr: never kept, never logged). */
async function drain(stream: ReadableStream<Uint8Array>): Promise<number> {
  let n = 0;
  for await (const chunk of stream) n += chunk.byteLength;
  return n;
}

export interface ExecPluginLimits {
  timeoutMs?: number;
  maxStdoutBytes?: number;
}

export async function runExecPlugin(exec: ExecConfig, cluster: { server: string; caPem?: string }, limits: ExecPluginLimits = {}): Promise<ExecCredential> {
  const info = {
    apiVersion: exec.apiVersion,
    kind: "ExecCredential",
    spec: {
      interactive: false,
      ...(exec.provideClusterInfo
        ? { cluster: { server: cluster.server, ...(cluster.caPem ? { "certificate-authority-data": Buffer.from(cluster.caPem).toString("base64") } : {}) } }
        : {}),
    },
  };
  const env: Record<string, string> = { ...(process.env as Record<string, string>), KUBERNETES_EXEC_INFO: JSON.stringify(info) };
  for (const e of exec.env ?? []) env[e.name] = e.value;
  let proc;
  try {
    proc = Bun.spawn([exec.command, ...(exec.args ?? [])], { env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  } catch (e) {
    throw new ExecCredentialError(
      `exec plugin: invalid apiVersion or command ${exec.command}: ${(e as Error).message}${exec.installHint ? `\n${exec.installHint}` : ""}`,
    );
  }
  const timeoutMs = limits.timeoutMs ?? EXEC_PLUGIN_TIMEOUT_MS;
  const maxStdout = limits.maxStdoutBytes ?? EXEC_PLUGIN_MAX_STDOUT_BYTES;
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    proc.kill("SIGKILL");
  }, timeoutMs);
  const [out, errBytes, code] = await Promise.all([
    readCapped(proc.stdout, maxStdout).then((o) => (o === undefined && proc.kill("SIGKILL"), o)),
    drain(proc.stderr),
    proc.exited,
  ]).finally(() => clearTimeout(timer));
  if (timedOut) throw new ExecCredentialError(`exec: executable ${exec.command} did not finish within ${timeoutMs} ms and was killed`);
  if (out === undefined) throw new ExecCredentialError(`exec: executable ${exec.command} printed more than ${maxStdout} bytes and was killed`);
  if (code !== 0)
    throw new ExecCredentialError(
      `exec: executable ${exec.command} failed with exit code ${code} (stderr: ${errBytes} bytes, not shown: it may hold credentials)`,
    );
  const r = execCredentialSchema.safeParse(parseExecOutput(out.toString("utf8"), exec.command));
  if (!r.success)
    throw new ExecCredentialError(`exec: decoding stdout of ${exec.command}: ${r.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
  const parsed = r.data;
  if (parsed.apiVersion !== exec.apiVersion)
    throw new ExecCredentialError(`exec plugin is configured to use API version ${exec.apiVersion}, plugin returned version ${parsed.apiVersion}`);
  const s = parsed.status;
  if (!s.token && !(s.clientCertificateData && s.clientKeyData))
    throw new ExecCredentialError(`exec plugin ${exec.command} returned no token and no client certificate`);
  return {
    ...(s.token ? { token: s.token } : {}),
    ...(s.clientCertificateData ? { certPem: s.clientCertificateData, keyPem: s.clientKeyData! } : {}),
    ...(s.expirationTimestamp ? { expiresAtMs: Date.parse(s.expirationTimestamp) } : {}),
  };
}

function parseExecOutput(text: string, command: string): unknown {
  try {
    return parseJsonRedacted(text, `exec: decoding stdout of ${command}`);
  } catch (e) {
    throw new ExecCredentialError((e as Error).message);
  }
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
