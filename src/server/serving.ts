// Decides how the main port serves (upstream cmd/kubelet/app/server.go InitializeTLS + BuildAuth):
// secured — TLS from tlsCertFile/tlsPrivateKeyFile, serverTLSBootstrap's certificate, or a
// self-signed pair in certDir; client certificates checked against authentication.x509.clientCAFile;
// the auth filter in front — always in API-server mode (as upstream, which never serves the main
// port without TLS), and standalone when the configuration asks for anything remote (TLS files, a
// client CA, or a specific non-loopback address). Otherwise, standalone only, the main port stays
// plain HTTP on loopback (bunlet's standalone default; listen.ts keeps the container-access
// handlers off it unless --unsafe-loopback-debug-handlers).
import { log, kv } from "../log.ts";
import type { KubeletConfiguration } from "../config/kubelet-config.ts";
import { isLoopback, isUnspecified } from "./address.ts";
import { allowsEveryone, buildAuth, type AuthClient } from "./auth/index.ts";
import type { DynamicServingCertificate, SecureServing } from "./listen.ts";
import { tlsCipherSuites, tlsMinVersion } from "./tls/options.ts";
import { loadOrGenerateKeyCert } from "./tls/self-signed.ts";

type ServingConfig = Pick<
  KubeletConfiguration,
  | "address"
  | "tlsCertFile"
  | "tlsPrivateKeyFile"
  | "tlsMinVersion"
  | "tlsCipherSuites"
  | "authentication"
  | "authorization"
  | "featureGates"
  | "serverTLSBootstrap"
>;

export interface ServingOpts {
  nodeName: string;
  /** --cert-dir: where the self-signed pair lives. */
  certDir: string;
  authClient?: AuthClient;
  /** serverTLSBootstrap's certificate manager (API-server mode only). */
  servingCertificates?: DynamicServingCertificate;
  /** --kubeconfig was given: the main port is TLS with authentication and authorization, whatever else is set. */
  apiServerMode?: boolean;
}

export class ServingError extends Error {
  override name = "ServingError";
}

/**
 * upstream InitializeTLS: with serverTLSBootstrap (and the RotateKubeletServerCertificate gate, on by
 * default) and no tlsCertFile/tlsPrivateKeyFile, the certificate comes from the certificate manager
 * instead of a self-signed pair; until it exists TLS handshakes fail.
 */
export function usesServerTLSBootstrap(c: ServingConfig): boolean {
  return c.serverTLSBootstrap === true && !c.tlsCertFile && !c.tlsPrivateKeyFile && c.featureGates?.RotateKubeletServerCertificate !== false;
}

export function wantsSecureServing(c: ServingConfig, apiServerMode = false): boolean {
  if (apiServerMode) return true;
  // Partial configurations (in-process tests) may lack the authentication block.
  if (c.tlsCertFile || c.tlsPrivateKeyFile || c.authentication?.x509?.clientCAFile) return true;
  return !isUnspecified(c.address) && !isLoopback(c.address);
}

export async function resolveServing(c: ServingConfig, opts: ServingOpts): Promise<SecureServing | undefined> {
  const bootstrapped = usesServerTLSBootstrap(c) && opts.servingCertificates !== undefined;
  if (usesServerTLSBootstrap(c) && !bootstrapped)
    log.warn("serverTLSBootstrap needs an API server (--kubeconfig) to request the serving certificate from: ignored, the self-signed pair is used");
  if (!wantsSecureServing(c, opts.apiServerMode === true || bootstrapped)) return undefined;
  // Configuration errors first, before anything is written to certDir.
  const auth = buildAuth(c, opts.nodeName, opts.authClient);
  const minVersion = tlsMinVersion(c.tlsMinVersion);
  const { ciphers, insecure } = tlsCipherSuites(c.tlsCipherSuites);
  for (const cipher of insecure) log.info(`Use of insecure cipher detected. ${kv({ cipher })}`);
  let certFile = c.tlsCertFile ?? "";
  let keyFile = c.tlsPrivateKeyFile ?? "";
  if (bootstrapped) {
    log.info("Serving certificate from serverTLSBootstrap: requested from the API server, served once issued");
  } else if (certFile === "" && keyFile === "") {
    const pair = await loadOrGenerateKeyCert(opts.certDir, opts.nodeName);
    ({ certFile, keyFile } = pair);
    log.info(`${pair.generated ? "Generated self-signed cert" : "Using self-signed cert"} ${kv({ certFile, keyFile })}`);
  } else if (certFile === "" || keyFile === "") {
    throw new ServingError(
      `tlsCertFile (--tls-cert-file) and tlsPrivateKeyFile (--tls-private-key-file) must be set together: got ${JSON.stringify({ tlsCertFile: certFile, tlsPrivateKeyFile: keyFile })}`,
    );
  }
  const everyone = allowsEveryone(c);
  if (everyone)
    log.warn("main server: anonymous requests are enabled and authorization mode is AlwaysAllow: anyone who connects may do anything, so it stays on loopback");
  log.info(
    `Serving securely ${kv({ anonymous: c.authentication.anonymous.enabled === true, x509: Boolean(c.authentication.x509.clientCAFile), tokenWebhook: c.authentication.webhook.enabled === true, authorizationMode: c.authorization.mode, tlsMinVersion: minVersion })}`,
  );
  return {
    certFile,
    keyFile,
    certificates: bootstrapped ? opts.servingCertificates : undefined,
    clientCAFile: c.authentication.x509.clientCAFile || undefined,
    minVersion,
    ciphers,
    auth,
    allowsEveryone: everyone,
  };
}
