import { describe, expect, test } from "bun:test";
import type { KubeClient } from "../../../src/kube/client.ts";
import { waitForCertificate } from "../../../src/kube/bootstrap/bootstrap.ts";
import type { CertificateSigningRequest } from "../../../src/kube/types.ts";

const PEM = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
const csr = (rv: string, status?: CertificateSigningRequest["status"]): CertificateSigningRequest =>
  ({
    metadata: { name: "node-csr-x", resourceVersion: rv },
    spec: { signerName: "kubernetes.io/kube-apiserver-client-kubelet", request: "UkVR" },
    status,
  }) as CertificateSigningRequest;
const approved = { conditions: [{ type: "Approved", status: "True" }] };

/** A client whose GET answers `current` and whose watch streams `events` (one JSON line each). */
function fakeClient(current: CertificateSigningRequest, events: object[]) {
  const calls: string[] = [];
  const client = {
    config: { server: "https://fake" },
    async request(o: { path: string; method?: string }) {
      calls.push(`${o.method ?? "GET"} ${o.path}`);
      return current;
    },
    async stream(o: { path: string; query?: Record<string, string | undefined> }) {
      calls.push(`WATCH ${o.path} rv=${o.query?.resourceVersion} ${o.query?.fieldSelector}`);
      return new Response(events.map((e) => JSON.stringify(e) + "\n").join(""));
    },
    setClientCertificate() {},
  } as unknown as KubeClient;
  return { client, calls };
}

describe("waitForCertificate", () => {
  test("with the create's answer: no GET, the watch starts from its resourceVersion; approved + certificate → the PEM", async () => {
    const { client, calls } = fakeClient(csr("1"), [
      { type: "MODIFIED", object: csr("8", approved) },
      { type: "MODIFIED", object: csr("9", { ...approved, certificate: Buffer.from(PEM).toString("base64") }) },
    ]);
    expect(await waitForCertificate(client, "node-csr-x", new AbortController().signal, csr("7"))).toBe(PEM);
    expect(calls).toEqual(["WATCH /apis/certificates.k8s.io/v1/certificatesigningrequests rv=7 metadata.name=node-csr-x"]);
  });

  test("without it (the CSR already existed): read first; an issued one needs no watch", async () => {
    const { client, calls } = fakeClient(csr("5", { ...approved, certificate: Buffer.from(PEM).toString("base64") }), []);
    expect(await waitForCertificate(client, "node-csr-x", new AbortController().signal)).toBe(PEM);
    expect(calls).toEqual(["GET /apis/certificates.k8s.io/v1/certificatesigningrequests/node-csr-x"]);
  });

  test("denied → the error upstream words", async () => {
    const { client } = fakeClient(csr("1"), [
      { type: "MODIFIED", object: csr("2", { conditions: [{ type: "Denied", status: "True", reason: "Nope", message: "not this node" }] }) },
    ]);
    await expect(waitForCertificate(client, "node-csr-x", new AbortController().signal, csr("1"))).rejects.toThrow(
      "certificate signing request is denied, reason: Nope, message: not this node",
    );
  });
});
