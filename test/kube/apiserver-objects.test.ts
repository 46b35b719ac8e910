// The Node, Lease and CSR objects a real kube-apiserver v1.37.2 returned (test/fixtures/apiserver/),
// read back through the schemas bunlet decodes API objects with: what bunlet uses is there and typed,
// and nothing else is lost on a write-back (the schemas pass unknown fields through).
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { csrSchema, leaseSchema, nodeSchema } from "../../src/kube/types.ts";

const fixture = (name: string) => JSON.parse(readFileSync(new URL(`../fixtures/apiserver/v1.37.2/${name}.json`, import.meta.url), "utf8"));

describe("objects as a real v1.37.2 API server returns them", () => {
  test("Node: metadata, conditions, and every other field kept", () => {
    const raw = fixture("node");
    const node = nodeSchema.parse(raw);
    expect(node.metadata.name).toBe(raw.metadata.name);
    expect(node.status?.conditions?.map((c) => c.type)).toEqual(expect.arrayContaining(["MemoryPressure", "DiskPressure", "PIDPressure", "Ready"]));
    expect(node).toEqual(raw);
  });

  test("Lease: holder, duration and renew time", () => {
    const raw = fixture("lease");
    const lease = leaseSchema.parse(raw);
    expect(lease.spec?.holderIdentity).toBe(raw.metadata.name);
    expect(lease.spec?.leaseDurationSeconds).toBe(40);
    expect(lease.spec?.renewTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    expect(lease).toEqual(raw);
  });

  test("CSR: the kubelet client signer, approved by the controller-manager, with its certificate", () => {
    const raw = fixture("csr");
    const csr = csrSchema.parse(raw);
    expect(csr.spec.signerName).toBe("kubernetes.io/kube-apiserver-client-kubelet");
    expect(csr.status?.conditions?.[0]).toMatchObject({ type: "Approved", reason: "AutoApproved" });
    expect(Buffer.from(csr.status!.certificate!, "base64").toString()).toStartWith("-----BEGIN CERTIFICATE-----");
    expect(csr).toEqual(raw);
  });
});
