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
    await openssl(["x509", "-req", "-in", `${base}.csr`, "-CA", ca.certFile, "-CAkey", ca.keyFile, "-set_serial", String(Date.now() * 1000 + serial), "-days", String(opts.days ?? 1), "-extfile", `${base}.ext`, "-out", `${base}.crt`], dir);
    return await readFile(`${base}.crt`, "utf8");
  } finally {
    await Promise.all([".csr", ".ext", ".crt"].map((s) => rm(base + s, { force: true })));
  }
}

/** A new EC key and a certificate for it signed by the CA: { certPem, keyPem }. */
export async function issueCert(ca: CA, dir: string, subject: string, opts: { serverAuth?: boolean; sans?: string[] } = {}): Promise<{ certPem: string; keyPem: string }> {
  const base = join(dir, `issue-${process.pid}-${++serial}`);
  try {
    await openssl(["req", ...EC, "-keyout", `${base}.key`, "-out", `${base}.csr`, "-subj", subject], dir);
    const certPem = await signCsr(ca, dir, await readFile(`${base}.csr`, "utf8"), opts);
    return { certPem, keyPem: await readFile(`${base}.key`, "utf8") };
  } finally {
    await Promise.all([".key", ".csr"].map((s) => rm(base + s, { force: true })));
  }
}
