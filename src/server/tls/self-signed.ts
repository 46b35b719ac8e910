// The serving certificate when tlsCertFile/tlsPrivateKeyFile are not given (upstream
// cmd/kubelet/app/server.go: <certDir>/kubelet.crt + kubelet.key, reused when readable, otherwise
// cert.GenerateSelfSignedCertKey(hostname): a "<host>-ca@<unix>" CA and a "<host>@<unix>" serving
// certificate it signs, valid one year, the host as DNS or IP SAN; kubelet.crt holds both).
// node:crypto cannot build certificates, so the openssl CLI does (spawned, never blocking).
import { access, chmod, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { constants } from "node:fs";
import { isIP } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface KeyCertPaths {
  certFile: string;
  keyFile: string;
  /** True when this call created them. */
  generated: boolean;
}

async function readable(path: string): Promise<boolean> {
  return access(path, constants.R_OK).then(
    () => true,
    () => false,
  );
}

async function openssl(args: string[], cwd: string): Promise<void> {
  let p;
  try {
    p = Bun.spawn(["openssl", ...args], { cwd, stdout: "ignore", stderr: "pipe" });
  } catch (err) {
    throw new Error(`cannot generate a self-signed serving certificate: openssl: ${(err as Error).message}; set tlsCertFile and tlsPrivateKeyFile`);
  }
  const [code, stderr] = await Promise.all([p.exited, new Response(p.stderr).text()]);
  if (code !== 0) throw new Error(`openssl ${args[0]} failed (exit ${code}): ${stderr.trim().split("\n").pop()}`);
}

export async function loadOrGenerateKeyCert(certDir: string, hostname: string, nowMs = Date.now()): Promise<KeyCertPaths> {
  const certFile = join(certDir, "kubelet.crt");
  const keyFile = join(certDir, "kubelet.key");
  if ((await readable(certFile)) && (await readable(keyFile))) return { certFile, keyFile, generated: false };
  await mkdir(certDir, { recursive: true, mode: 0o755 });
  const work = await mkdtemp(join(tmpdir(), "bunlet-selfsigned-"));
  try {
    const unix = Math.floor(nowMs / 1000);
    const san = isIP(hostname) ? `IP:${hostname}` : `DNS:${hostname}`;
    await writeFile(
      join(work, "ext"),
      `basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\nsubjectAltName=${san}\n`,
    );
    await openssl(
      [
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "ca.key",
        "-out",
        "ca.crt",
        "-days",
        "365",
        "-subj",
        `/CN=${hostname}-ca@${unix}`,
        "-addext",
        "basicConstraints=critical,CA:TRUE",
        "-addext",
        "keyUsage=critical,digitalSignature,keyEncipherment,keyCertSign",
      ],
      work,
    );
    await openssl(["req", "-newkey", "rsa:2048", "-nodes", "-keyout", "leaf.key", "-out", "leaf.csr", "-subj", `/CN=${hostname}@${unix}`], work);
    await openssl(
      [
        "x509",
        "-req",
        "-in",
        "leaf.csr",
        "-CA",
        "ca.crt",
        "-CAkey",
        "ca.key",
        "-set_serial",
        String(unix),
        "-days",
        "365",
        "-extfile",
        "ext",
        "-out",
        "leaf.crt",
      ],
      work,
    );
    const chain = (await readFile(join(work, "leaf.crt"), "utf8")) + (await readFile(join(work, "ca.crt"), "utf8"));
    await writeFile(keyFile, await readFile(join(work, "leaf.key")), { mode: 0o600 });
    await chmod(keyFile, 0o600);
    await writeFile(certFile, chain, { mode: 0o644 });
    return { certFile, keyFile, generated: true };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
