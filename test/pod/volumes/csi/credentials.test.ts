import { describe, expect, test } from "bun:test";
import { type GetObject, getCredentialsFromSecret, secretCredentials, secretPath, volumeSecrets } from "../../../../src/pod/volumes/csi/credentials.ts";

const b64 = (v: string) => Buffer.from(v).toString("base64");
const ref = { namespace: "ns", name: "creds" };

describe("a CSI volume's secrets (upstream getCredentialsFromSecret)", () => {
  test("the data values as strings; no data, no secrets", () => {
    expect(secretCredentials({ data: { user: b64("admin"), pem: b64("-----BEGIN\nx\n") } })).toEqual({ user: "admin", pem: "-----BEGIN\nx\n" });
    expect(secretCredentials({})).toEqual({});
    expect(secretCredentials({ data: null })).toEqual({});
  });
  test("read from the Secret's API path", async () => {
    const paths: string[] = [];
    const get = async (p: string): Promise<unknown> => {
      paths.push(p);
      return { metadata: { name: "creds" }, data: { k: b64("v") } };
    };
    const got = await getCredentialsFromSecret(get, ref);
    expect(got).toEqual({ k: "v" });
    expect(paths).toEqual(["/api/v1/namespaces/ns/secrets/creds"]);
    expect(secretPath({ namespace: "a b", name: "c/d" })).toBe("/api/v1/namespaces/a%20b/secrets/c%2Fd");
  });
  const forbidden = 'secrets "creds" is forbidden: User "system:node:n1" cannot get resource "secrets"';
  const cases: [string, GetObject | undefined, string][] = [
    ["not found", async () => undefined, 'secrets "creds" not found'],
    [
      "forbidden",
      async () => {
        throw new Error(forbidden);
      },
      forbidden,
    ],
    ["not a Secret", async () => ({ data: { k: 7 } }), "the API server's answer is not a Secret with string data"],
    ["no client", undefined, "failed to get a kubernetes client"],
  ];
  test.each(cases)("%s: upstream's error, prefixed with the field that names the Secret", async (_n, get, why) => {
    await expect(volumeSecrets(get, "NodeStageSecretRef", ref)).rejects.toThrow(
      `fetching NodeStageSecretRef ns/creds failed: kubernetes.io/csi: failed to find the secret creds in the namespace ns with error: ${why}`,
    );
  });
  test("no reference: no secrets and no read", async () => {
    expect(await volumeSecrets(undefined, "NodePublishSecretRef", undefined)).toBeUndefined();
  });
  test("an error never carries a value", async () => {
    const err = await volumeSecrets(async () => ({ data: { k: 5 } }), "NodePublishSecretRef", ref).catch((e: Error) => e.message);
    expect(err).not.toContain("5");
  });
});
