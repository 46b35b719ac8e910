// tlsMinVersion and tlsCipherSuites as the kubelet reads them (k8s.io/component-base/cli/flag
// TLSVersion / TLSCipherSuites: Go's names), turned into OpenSSL's names for node:tls. Unknown
// names fail with upstream's errors. TLS 1.3 suites are accepted and, as in Go, not configurable.

export class TLSOptionError extends Error {
  override name = "TLSOptionError";
}

const VERSIONS: Record<string, "TLSv1" | "TLSv1.1" | "TLSv1.2" | "TLSv1.3"> = {
  VersionTLS10: "TLSv1",
  VersionTLS11: "TLSv1.1",
  VersionTLS12: "TLSv1.2",
  VersionTLS13: "TLSv1.3",
};

/** Go's crypto/tls server default minimum is TLS 1.2. */
export function tlsMinVersion(name: string | undefined): "TLSv1" | "TLSv1.1" | "TLSv1.2" | "TLSv1.3" {
  if (!name) return "TLSv1.2";
  const v = VERSIONS[name];
  if (!v) throw new TLSOptionError(`unknown tls version "${name}"`);
  return v;
}

/** Go cipher suite name → OpenSSL name; null for TLS 1.3 suites (always on, like Go). */
const SUITES: Record<string, string | null> = {
  TLS_AES_128_GCM_SHA256: null,
  TLS_AES_256_GCM_SHA384: null,
  TLS_CHACHA20_POLY1305_SHA256: null,
  TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA: "ECDHE-ECDSA-AES128-SHA",
  TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA: "ECDHE-ECDSA-AES256-SHA",
  TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA: "ECDHE-RSA-AES128-SHA",
  TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA: "ECDHE-RSA-AES256-SHA",
  TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256: "ECDHE-ECDSA-AES128-GCM-SHA256",
  TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384: "ECDHE-ECDSA-AES256-GCM-SHA384",
  TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256: "ECDHE-RSA-AES128-GCM-SHA256",
  TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384: "ECDHE-RSA-AES256-GCM-SHA384",
  TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256: "ECDHE-ECDSA-CHACHA20-POLY1305",
  TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256: "ECDHE-RSA-CHACHA20-POLY1305",
  TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305: "ECDHE-ECDSA-CHACHA20-POLY1305",
  TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305: "ECDHE-RSA-CHACHA20-POLY1305",
  // Insecure ones Go still accepts by name (upstream logs "Use of insecure cipher detected.").
  TLS_RSA_WITH_AES_128_CBC_SHA: "AES128-SHA",
  TLS_RSA_WITH_AES_256_CBC_SHA: "AES256-SHA",
  TLS_RSA_WITH_AES_128_GCM_SHA256: "AES128-GCM-SHA256",
  TLS_RSA_WITH_AES_256_GCM_SHA384: "AES256-GCM-SHA384",
  TLS_RSA_WITH_AES_128_CBC_SHA256: "AES128-SHA256",
  TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256: "ECDHE-ECDSA-AES128-SHA256",
  TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256: "ECDHE-RSA-AES128-SHA256",
  TLS_RSA_WITH_3DES_EDE_CBC_SHA: "DES-CBC3-SHA",
  TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA: "ECDHE-RSA-DES-CBC3-SHA",
  TLS_RSA_WITH_RC4_128_SHA: "RC4-SHA",
  TLS_ECDHE_RSA_WITH_RC4_128_SHA: "ECDHE-RSA-RC4-SHA",
  TLS_ECDHE_ECDSA_WITH_RC4_128_SHA: "ECDHE-ECDSA-RC4-SHA",
};

const INSECURE = /(_RC4_|_3DES_|_CBC_SHA256$|^TLS_RSA_)/;

export interface CipherChoice {
  /** OpenSSL cipher list for TLS ≤ 1.2, or undefined for the defaults. */
  ciphers?: string;
  /** Go names of the insecure suites chosen (logged, as upstream). */
  insecure: string[];
}

export function tlsCipherSuites(names: readonly string[] | undefined): CipherChoice {
  if (!names || names.length === 0) return { insecure: [] };
  const openssl: string[] = [];
  for (const n of names) {
    if (!(n in SUITES)) throw new TLSOptionError(`Cipher suite ${n} not supported or doesn't exist`);
    const o = SUITES[n];
    if (o) openssl.push(o);
  }
  return { ciphers: openssl.length > 0 ? openssl.join(":") : undefined, insecure: names.filter((n) => INSECURE.test(n)) };
}
