// Client certificate rotation against the API-server double: the deadline is 70–90 % of the
// lifetime; at the deadline the node requests a new certificate with its current one, the pair is
// stored, kubelet-client-current.pem moves to it and the clients switch.
import { afterAll, expect, test } from "bun:test";
import { X509Certificate } from "node:crypto";
import { mkdtemp, readlink, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { realClock } from "../../../src/clock.ts";
import { createManualClock } from "../../../src/manual-clock.ts";
import { createCertRotation, loadClientCert, rotationDeadlineMs } from "../../../src/kube/bootstrap/index.ts";
import { createKubeClient, loadKubeconfig } from "../../../src/kube/index.ts";
import { startApiServer } from "../../support/apiserver/index.ts";
import { until } from "../../support/wait.ts";

const api = await startApiServer();
const dir = await mkdtemp(join(tmpdir(), "rotation-"));
afterAll(async () => {
  await api.close();
  await rm(dir, { recursive: true, force: true });
});

test.each([
  [0, 0.7],
  [0.5, 0.8],
  [0.999, 0.8998],
])("deadline with jitter %p is at %p of the lifetime", (rand, fraction) => {
  expect(rotationDeadlineMs(1000, 11_000, rand)).toBeCloseTo(1000 + 10_000 * fraction, 0);
});

test("at the deadline the node renews its certificate with its current one; clients switch", async () => {
  const certDir = join(dir, "pki");
  const kubeconfigPath = join(dir, "kubelet.conf");
  await api.writeKubeconfig(join(dir, "bootstrap.conf"), { token: api.bootstrapToken });
  await loadClientCert({ kubeconfigPath, bootstrapKubeconfigPath: join(dir, "bootstrap.conf"), certDir, nodeName: "rot-1", clock: realClock });
  const rest = await loadKubeconfig(kubeconfigPath);
  const first = new X509Certificate(rest.certPem!);
  const firstFile = await readlink(join(certDir, "kubelet-client-current.pem"));
  const client = createKubeClient(rest, { clock: realClock });
  // A clock past 90 % of the certificate's life: the rotation is due at once.
  const clock = createManualClock(first.validToDate.getTime() - 60_000);
  let rotated: string | undefined;
  const rotation = createCertRotation({
    client,
    certDir,
    nodeName: "rot-1",
    clock,
    rand: () => 0.5,
    onRotated: (cert, key) => {
      rotated = cert;
      client.setClientCertificate(cert, key);
    },
  });
  await rotation.start();
  clock.advance(0);
  await until("rotated", () => rotated, 30_000);
  rotation.stop();
  const second = new X509Certificate(rotated!);
  expect(second.serialNumber).not.toBe(first.serialNumber);
  expect(second.subject).toBe("O=system:nodes\nCN=system:node:rot-1");
  const csrs = (await api.store.list("certificatesigningrequests.certificates.k8s.io/")).items;
  expect(csrs.map((c) => c.spec.username).sort()).toEqual([expect.stringMatching(/^system:bootstrap:/), "system:node:rot-1"].sort());
  expect(await readlink(join(certDir, "kubelet-client-current.pem"))).not.toBe(firstFile);
  await client.request({ path: "/api/v1/nodes" });
  expect(api.requests.at(-1)!.user).toBe("system:node:rot-1");
  expect(rotation.deadline()).toBeCloseTo(second.validFromDate.getTime() + 0.8 * (second.validToDate.getTime() - second.validFromDate.getTime()), -3);
});
