// The serving-certificate request: the template from the node's addresses (upstream
// newGetTemplateFn), the CSR's subject and SANs as openssl reads them, and the check that a
// certificate still matches the addresses.
import { afterAll, describe, expect, test } from "bun:test";
import { X509Certificate } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  certSatisfiesTemplate,
  createCsrPem,
  generateKeyPem,
  hostnamesAndIPs,
  ipBytes,
  keyFromPem,
  parsePair,
  servingTemplate,
} from "../../../src/kube/bootstrap/index.ts";

const dir = await mkdtemp(join(tmpdir(), "serving-csr-"));
afterAll(() => rm(dir, { recursive: true, force: true }));

async function openssl(args: string[]): Promise<string> {
  const p = Bun.spawn(["openssl", ...args], { cwd: dir, stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  if (code !== 0) throw new Error(`openssl ${args.join(" ")}: ${err}`);
  return out + err;
}

describe("ipBytes", () => {
  test.each([
    ["10.0.0.7", "0a000007"],
    ["::1", "00000000000000000000000000000001"],
    ["fd00:1::5", "fd000001000000000000000000000005"],
    ["::ffff:192.168.1.2", "c0a80102"],
    ["2001:db8:0:0:0:0:2:1", "20010db8000000000000000000020001"],
  ])("%p", (ip, hex) => expect(ipBytes(ip).toString("hex")).toBe(hex));
  test("refuses a name", () => expect(() => ipBytes("node-1")).toThrow("not an IP address"));
});

describe("servingTemplate", () => {
  test("Hostname as DNS, InternalIP/ExternalIP as IPs, deduplicated and sorted", () => {
    const t = servingTemplate("n1", [
      { type: "InternalIP", address: "10.0.0.9" },
      { type: "InternalIP", address: "10.0.0.10" },
      { type: "ExternalIP", address: "10.0.0.9" },
      { type: "Hostname", address: "n1.example" },
      { type: "InternalDNS", address: "a.internal" },
      { type: "Hostname", address: "" },
    ]);
    expect(t).toEqual({
      commonName: "system:node:n1",
      organizations: ["system:nodes"],
      dnsNames: ["a.internal", "n1.example"],
      ipAddresses: ["10.0.0.10", "10.0.0.9"],
    });
  });
  test("a Hostname that is an IP goes to the IPs", () => {
    expect(hostnamesAndIPs([{ type: "Hostname", address: "192.168.0.4" }])).toEqual({ dnsNames: [], ipAddresses: ["192.168.0.4"] });
  });
  test("no IP: no request, unless AllowDNSOnlyNodeCSR", () => {
    const only = [{ type: "Hostname", address: "n1" }];
    expect(servingTemplate("n1", only)).toBeUndefined();
    expect(servingTemplate("n1", [])).toBeUndefined();
    expect(servingTemplate("n1", only, true)?.dnsNames).toEqual(["n1"]);
  });
  test("IPv6 addresses keep a canonical text", () => {
    expect(servingTemplate("n1", [{ type: "InternalIP", address: "fd00:0:0:0:0:0:0:5" }])?.ipAddresses).toEqual(["fd00::5"]);
  });
});

describe("serving CSR", () => {
  const keyPem = generateKeyPem();
  const t = servingTemplate("node-a", [
    { type: "InternalIP", address: "10.1.2.3" },
    { type: "InternalIP", address: "fd00::7" },
    { type: "Hostname", address: "node-a" },
  ])!;
  const csrPem = createCsrPem(keyFromPem(keyPem), { commonName: t.commonName, organizations: t.organizations }, t);

  test("openssl verifies it and reads the subject and SANs", async () => {
    await writeFile(join(dir, "a.csr"), csrPem);
    const text = await openssl(["req", "-in", "a.csr", "-noout", "-verify", "-text"]);
    expect(text).toContain("verify OK");
    expect(text).toMatch(/Subject: O\s*=\s*system:nodes, CN\s*=\s*system:node:node-a/);
    expect(text).toContain("DNS:node-a, IP Address:10.1.2.3, IP Address:FD00:0:0:0:0:0:0:7");
    expect(text).toContain("ASN1 OID: prime256v1");
  });

  test("without SANs the attributes stay empty (the client CSR)", async () => {
    await writeFile(join(dir, "b.csr"), createCsrPem(keyFromPem(keyPem), { commonName: "system:node:x", organizations: ["system:nodes"] }));
    const text = await openssl(["req", "-in", "b.csr", "-noout", "-verify", "-text"]);
    expect(text).toContain("verify OK");
    expect(text).not.toContain("Subject Alternative Name");
  });

  test("a certificate issued for it satisfies the template; other addresses do not", async () => {
    await writeFile(join(dir, "a.key"), keyPem);
    await writeFile(join(dir, "a.csr"), csrPem);
    await openssl(["x509", "-req", "-in", "a.csr", "-signkey", "a.key", "-copy_extensions", "copy", "-days", "1", "-out", "a.crt"]);
    const certPem = await Bun.file(join(dir, "a.crt")).text();
    const cert = new X509Certificate(certPem);
    expect(certSatisfiesTemplate(cert, t)).toBe(true);
    expect(certSatisfiesTemplate(cert, { ...t, ipAddresses: ["10.1.2.3"] })).toBe(false);
    expect(certSatisfiesTemplate(cert, { ...t, dnsNames: ["node-b"] })).toBe(false);
    expect(certSatisfiesTemplate(cert, { ...t, commonName: "system:node:node-b" })).toBe(false);
    const pair = parsePair(`${certPem}${keyPem}`, "a.pem");
    expect(pair.notAfterMs).toBe(cert.validToDate.getTime());
    expect(() => parsePair(`${certPem}${generateKeyPem()}`, "a.pem")).toThrow("does not match");
    expect(() => parsePair(certPem, "a.pem")).toThrow("a.pem: expected a PEM certificate and private key");
  });
});
