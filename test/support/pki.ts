// A throwaway PKI for TLS tests, made with the openssl CLI: a client CA, a client certificate it
// signs (CN/O given), and a self-signed "forged" client certificate. Paths under `dir`.
import { join } from "node:path";

async function openssl(args: string[], cwd: string): Promise<void> {
  const p = Bun.spawn(["openssl", ...args], { cwd, stdout: "ignore", stderr: "pipe" });
  const [code, err] = await Promise.all([p.exited, new Response(p.stderr).text()]);
  if (code !== 0) throw new Error(`openssl ${args.join(" ")}: ${err}`);
}

export interface TestPki {
  caFile: string;
  client: (name: string) => { cert: string; key: string };
}

/** Creates ca.crt, <name>.crt/.key for each [name, CN, O] signed by it, and forged.crt/.key. */
export async function makeTestPki(dir: string, clients: [name: string, cn: string, org?: string][]): Promise<TestPki> {
  await openssl(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.crt", "-days", "1", "-subj", "/CN=test-client-ca"], dir);
  await Bun.write(join(dir, "client.ext"), "extendedKeyUsage=clientAuth\n");
  for (const [name, cn, org] of clients) {
    await openssl(
      ["req", "-newkey", "rsa:2048", "-nodes", "-keyout", `${name}.key`, "-out", `${name}.csr`, "-subj", `/CN=${cn}${org ? `/O=${org}` : ""}`],
      dir,
    );
    await openssl(
      [
        "x509",
        "-req",
        "-in",
        `${name}.csr`,
        "-CA",
        "ca.crt",
        "-CAkey",
        "ca.key",
        "-set_serial",
        "7",
        "-days",
        "1",
        "-extfile",
        "client.ext",
        "-out",
        `${name}.crt`,
      ],
      dir,
    );
  }
  await openssl(
    [
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-keyout",
      "forged.key",
      "-out",
      "forged.crt",
      "-days",
      "1",
      "-subj",
      "/CN=system:admin/O=system:masters",
    ],
    dir,
  );
  return { caFile: join(dir, "ca.crt"), client: (name) => ({ cert: join(dir, `${name}.crt`), key: join(dir, `${name}.key`) }) };
}

/** Runs curl; returns the HTTP status and body (status 0 when the connection failed). */
export async function curl(args: string[]): Promise<{ status: number; body: string; stderr: string }> {
  const p = Bun.spawn(["curl", "-sS", "--max-time", "10", "-o", "-", "-w", "\n%{http_code}", ...args], { stdout: "pipe", stderr: "pipe" });
  const [out, stderr] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  const nl = out.lastIndexOf("\n");
  return { status: Number(out.slice(nl + 1)) || 0, body: out.slice(0, nl), stderr };
}

/**
 * The serial (upper-case hex) of the certificate served on 127.0.0.1:`port`, once openssl has verified it
 * against `caFile` (and, with `host`, as a certificate for that DNS name); undefined when the handshake
 * or the verification fails.
 */
export async function servedSerial(port: number, caFile: string, host?: string): Promise<string | undefined> {
  const verify = `-CAfile ${caFile} -verify_return_error${host ? ` -verify_hostname ${host}` : ""}`;
  const p = Bun.spawn(["sh", "-c", `openssl s_client -connect 127.0.0.1:${port} ${verify} </dev/null 2>/dev/null | openssl x509 -noout -serial`], {
    stdout: "pipe",
    stderr: "ignore",
  });
  const [out, code] = await Promise.all([new Response(p.stdout).text(), p.exited]);
  return code === 0
    ? out
        .trim()
        .replace(/^serial=/, "")
        .toUpperCase()
    : undefined;
}
