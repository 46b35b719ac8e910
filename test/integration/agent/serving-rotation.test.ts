// serverTLSBootstrap's rotation, against the API-server double: its signer issues serving certificates
// that live 30 s, so the node renews one at 70–90 % of its life within the test; kube-controller-manager
// signs for 10 minutes at the shortest (a CSR's expirationSeconds minimum; its own duration is a flag of
// the control plane). The renewed certificate is served on the same port without a restart, and
// /metrics counts the rotation. Approval, serving and verification against a real control plane:
// serving-bootstrap.test.ts. Needs root and containerd.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { ApiServerDouble } from "../../support/apiserver/index.ts";
import { freePort } from "../../support/binary.ts";
import { clusterPaths, joinDouble, type JoinedNode } from "../../support/cluster.ts";
import { canRunContainerd } from "../../support/containerd.ts";
import { curl, servedSerial } from "../../support/pki.ts";
import { until } from "../../support/wait.ts";

const { base: BASE } = clusterPaths("servingrot");
const CSRS = "certificatesigningrequests.certificates.k8s.io/";

describe.skipIf(!canRunContainerd())("serverTLSBootstrap: rotation", () => {
  let c: JoinedNode;
  let api: ApiServerDouble;
  const port = freePort();
  const caFile = join(BASE, "ca.crt");
  const client = ["--cert", join(BASE, "client.pem"), "--key", join(BASE, "client.key")];
  const served = () => servedSerial(port, caFile);
  /** The serving CSR not approved yet (the list is in name order, not creation order). */
  const pending = async () =>
    (await api.store.list(CSRS)).items.find(
      (x) => x.spec.signerName === "kubernetes.io/kubelet-serving" && !(x.status?.conditions ?? []).some((y: { type: string }) => y.type === "Approved"),
    );

  beforeAll(async () => {
    c = await joinDouble({
      name: "servingrot",
      port,
      api: { servingCertLifetimeSeconds: 30 },
      prepare: async (x) => {
        await writeFile(caFile, x.api.caPem);
        const pair = await x.api.issueClientCert("kube-apiserver-kubelet-client", ["system:masters"]);
        await writeFile(client[1]!, pair.certPem);
        await writeFile(client[3]!, pair.keyPem);
      },
      config: [
        "serverTLSBootstrap: true",
        `authentication: { anonymous: { enabled: false }, webhook: { enabled: false }, x509: { clientCAFile: ${caFile} } }`,
        "authorization: { mode: AlwaysAllow }",
      ],
    });
    api = c.api;
  }, 600_000);

  afterAll(async () => {
    await c?.stop();
  }, 120_000);

  test("the short-lived certificate is renewed at 70–90 % of its life and served on the same port without a restart", async () => {
    await api.approveCsr((await until("the serving CSR", pending, 30_000)).metadata.name);
    const before = await until("served", served, 30_000);
    const second = await until("the renewal CSR", pending, 60_000);
    await api.approveCsr(second.metadata.name);
    const after = await until(
      "the renewed certificate served",
      async () => {
        const s = await served();
        return s && s !== before ? s : undefined;
      },
      30_000,
    );
    expect(after).not.toBe(before);
    const metrics = await curl(["--cacert", caFile, ...client, "--resolve", `${c.node}:${port}:127.0.0.1`, `https://${c.node}:${port}/metrics`]);
    expect(metrics.status).toBe(200);
    expect(metrics.body).toMatch(/^kubelet_certificate_manager_server_rotation_seconds_count 1$/m);
    expect(metrics.body).toMatch(/^kubelet_server_expiration_renew_errors 0$/m);
  }, 150_000);
});
