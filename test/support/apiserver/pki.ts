// The double's PKI, made with the openssl CLI (test infrastructure only): a cluster CA, the API
// server's serving certificate for 127.0.0.1/localhost, client certificates, and CSR signing as
// kube-controller-manager's csrsigning controller does with the cluster CA.
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";

export interface CA {
  certFile: string;
  keyFile: string;
  certPem: string;
}

async function openssl(args: string[], cwd: string): Promise<void> {
  const p = Bun.spawn(["openssl", ...args], { cwd, stdout: "pipe", stderr: "pipe" });
  const [code, err] = await Promise.all([p.exited, new Response(p.stderr).text()]);
  if (code !== 0) throw new Error(`openssl ${args[0]} failed (exit ${code}): ${err.trim()}`);
}

const EC = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"];

export async function createCA(dir: string, cn = "kubernetes"): Promise<CA> {
  await mkdir(dir, { recursive: true });
  const certFile = join(dir, "ca.crt");
  const keyFile = join(dir, "ca.key");
  await openssl(["req", "-x509", ...EC, "-keyout", keyFile, "-out", certFile, "-days", "2", "-subj", `/CN=${cn}`], dir);
  return { certFile, keyFile, certPem: await readFile(certFile, "utf8") };
}

let serial = 0;

/** Signs a PEM CSR with the CA; returns the PEM certificate. */
export async function signCsr(ca: CA, dir: string, csrPem: string, opts: { days?: number; serverAuth?: boolean; sans?: string[] } = {}): Promise<string> {
  const base = join(dir, `sign-${process.pid}-${++serial}`);
  await writeFile(`${base}.csr`, csrPem);
  const ext = [`extendedKeyUsage=${opts.serverAuth ? "serverAuth" : "clientAuth"}`, "keyUsage=critical,digitalSignature,keyEncipherment"];
  if (opts.sans?.length) ext.push(`subjectAltName=${opts.sans.join(",")}`);
  await writeFile(`${base}.ext`, ext.join("\n") + "\n");
  try {
    await openssl(
      [
        "x509",
        "-req",
        "-in",
        `${base}.csr`,
        "-CA",
        ca.certFile,
        "-CAkey",
        ca.keyFile,
        "-set_serial",
        String(Date.now() * 1000 + serial),
        "-days",
        String(opts.days ?? 1),
        "-extfile",
        `${base}.ext`,
        "-out",
        `${base}.crt`,
      ],
      dir,
    );
    return await readFile(`${base}.crt`, "utf8");
  } finally {
    await Promise.all([".csr", ".ext", ".crt"].map((s) => rm(base + s, { force: true })));
  }
}

/** A new EC key and a certificate for it signed by the CA: { certPem, keyPem }. */
export async function issueCert(
  ca: CA,
  dir: string,
  subject: string,
  opts: { serverAuth?: boolean; sans?: string[] } = {},
): Promise<{ certPem: string; keyPem: string }> {
  const base = join(dir, `issue-${process.pid}-${++serial}`);
  try {
    await openssl(["req", ...EC, "-keyout", `${base}.key`, "-out", `${base}.csr`, "-subj", subject], dir);
    const certPem = await signCsr(ca, dir, await readFile(`${base}.csr`, "utf8"), opts);
    return { certPem, keyPem: await readFile(`${base}.key`, "utf8") };
  } finally {
    await Promise.all([".key", ".csr"].map((s) => rm(base + s, { force: true })));
  }
}

/** What a CSR asks for, as the signer's validation reads it. */
export interface CsrContents {
  organizations: string[];
  commonName: string;
  dnsNames: string[];
  ipAddresses: string[];
  emails: string[];
  uris: string[];
}

export async function inspectCsr(dir: string, csrPem: string): Promise<CsrContents> {
  const file = join(dir, `inspect-${process.pid}-${++serial}.csr`);
  await writeFile(file, csrPem);
  try {
    const p = Bun.spawn(["openssl", "req", "-in", file, "-noout", "-text"], { stdout: "pipe", stderr: "pipe" });
    const [text, code] = await Promise.all([new Response(p.stdout).text(), p.exited]);
    if (code !== 0) throw new Error("cannot parse the CSR");
    const subject = /Subject: (.*)/.exec(text)?.[1] ?? "";
    const rdns = subject.split(/,\s*/).map((r) => r.split(/\s*=\s*/));
    const san = /X509v3 Subject Alternative Name:\s*\n\s*(.*)/.exec(text)?.[1] ?? "";
    const names = san ? san.split(/,\s*/) : [];
    const of = (prefix: string) => names.filter((n) => n.startsWith(prefix)).map((n) => n.slice(prefix.length));
    return {
      organizations: rdns.filter(([k]) => k === "O").map(([, v]) => v ?? ""),
      commonName: rdns.find(([k]) => k === "CN")?.[1] ?? "",
      dnsNames: of("DNS:"),
      ipAddresses: of("IP Address:"),
      emails: of("email:"),
      uris: of("URI:"),
    };
  } finally {
    await rm(file, { force: true });
  }
}

/** upstream ValidateKubeletServingCSR (pkg/apis/certificates/helpers.go): the kubelet-serving signer's checks. */
export function validateKubeletServingCsr(c: CsrContents, usages: readonly string[]): string | undefined {
  if (c.organizations.length !== 1 || c.organizations[0] !== "system:nodes") return "subject organization is not system:nodes";
  if (c.dnsNames.length === 0 && c.ipAddresses.length === 0) return "DNS or IP subjectAltName is required";
  if (c.emails.length > 0) return "Email subjectAltNames are not allowed";
  if (c.uris.length > 0) return "URI subjectAltNames are not allowed";
  const set = [...new Set(usages)].sort().join(",");
  if (set !== "digital signature,key encipherment,server auth" && set !== "digital signature,server auth")
    return "usages did not match [digital signature key encipherment server auth]";
  if (!c.commonName.startsWith("system:node:")) return "subject common name does not begin with system:node:";
  return undefined;
}

/**
 * Signs a serving CSR as the kubelet-serving signer does: the CSR's SANs copied, server auth,
 * valid from now for lifetimeSeconds (openssl ca: x509 -req only knows whole days).
 */
export async function signServingCsr(ca: CA, dir: string, csrPem: string, lifetimeSeconds: number): Promise<string> {
  const work = join(dir, `serving-${process.pid}-${++serial}`);
  await mkdir(join(work, "db"), { recursive: true });
  const cnf = [
    "[ ca ]",
    "default_ca = d",
    "[ d ]",
    "database = db/index.txt",
    "new_certs_dir = db",
    "serial = db/serial",
    "default_md = sha256",
    "policy = p",
    "copy_extensions = copy",
    "unique_subject = no",
    "[ p ]",
    "organizationName = optional",
    "commonName = supplied",
  ];
  const asn1 = (ms: number) => new Date(ms).toISOString().replace(/^\d\d(\d\d)-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d).*$/, "$1$2$3$4$5$6Z");
  try {
    await Promise.all([
      writeFile(join(work, "ca.cnf"), cnf.join("\n") + "\n"),
      writeFile(join(work, "db", "index.txt"), ""),
      writeFile(join(work, "db", "serial"), "1000\n"),
      writeFile(join(work, "ext"), "extendedKeyUsage=serverAuth\nkeyUsage=critical,digitalSignature,keyEncipherment\n"),
      writeFile(join(work, "req.csr"), csrPem),
    ]);
    const now = Date.now();
    await openssl(
      [
        "ca",
        "-batch",
        "-config",
        "ca.cnf",
        "-cert",
        ca.certFile,
        "-keyfile",
        ca.keyFile,
        "-in",
        "req.csr",
        "-out",
        "leaf.crt",
        "-startdate",
        asn1(now),
        "-enddate",
        asn1(now + lifetimeSeconds * 1000),
        "-extfile",
        "ext",
        "-notext",
        "-preserveDN",
        "-rand_serial",
      ],
      work,
    );
    return await readFile(join(work, "leaf.crt"), "utf8");
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
