// upstream fileStore.Update runs tls.X509KeyPair before writing: an issued certificate whose public key
// is not our key's (a signer answering with another node's certificate, or garbage) is refused, and
// nothing is written — kubelet-client-current.pem keeps pointing at the working pair.
import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, readlinkSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CertKeyMismatchError, storeCertPair } from "../../../src/kube/bootstrap/bootstrap.ts";
import { createCA, issueCert } from "../../support/apiserver/pki.ts";

const dir = mkdtempSync(join(tmpdir(), `bunlet-storepair-${process.pid}-`));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("a certificate for another key, or not a certificate, is refused before anything is written", async () => {
  const ca = await createCA(join(dir, "ca"));
  const mine = await issueCert(ca, join(dir, "ca"), "/O=system:nodes/CN=system:node:a");
  const other = await issueCert(ca, join(dir, "ca"), "/O=system:nodes/CN=system:node:b");
  const certDir = join(dir, "certs");
  const current = await storeCertPair(certDir, "kubelet-client", mine.certPem, mine.keyPem, Date.UTC(2026, 0, 1));
  const good = readlinkSync(current);

  await expect(storeCertPair(certDir, "kubelet-client", other.certPem, mine.keyPem, Date.UTC(2026, 0, 2))).rejects.toThrow(CertKeyMismatchError);
  await expect(
    storeCertPair(certDir, "kubelet-client", "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n", mine.keyPem, Date.UTC(2026, 0, 3)),
  ).rejects.toThrow(/not a PEM certificate/);
  expect(readlinkSync(current)).toBe(good);
  expect(readdirSync(certDir).sort()).toEqual(["kubelet-client-2026-01-01-00-00-00.pem", "kubelet-client-current.pem"]);
  expect(existsSync(join(certDir, "kubelet-client-2026-01-02-00-00-00.pem"))).toBe(false);
});
