// The API client against the API-server double over real TLS: the kubeconfig's CA is what makes
// the server trusted (this machine sets NODE_EXTRA_CA_CERTS; the double's CA is not in it, so a
// pass here cannot come from the system roots), client certificates from files or data, tokens,
// token files, exec credential plugins, and the API errors with their Status reason.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { realClock } from "../../../src/clock.ts";
import { ApiError, createKubeClient, isConflict, isNotFound, loadKubeconfig, nodeSchema, parseKubeconfig } from "../../../src/kube/index.ts";
import { startApiServer, type ApiServerDouble } from "../../support/apiserver/index.ts";

let api: ApiServerDouble;
let dir: string;
beforeAll(async () => {
  api = await startApiServer();
  dir = await mkdtemp(join(tmpdir(), "kube-client-"));
});
afterAll(async () => {
  await api?.close();
  await rm(dir, { recursive: true, force: true });
});

const whoAmI = () => api.requests.at(-1)!.user;

describe("TLS", () => {
  test("the kubeconfig's CA verifies the server; without it the self-signed server is refused", async () => {
    const good = createKubeClient({ server: api.url, caPem: api.caPem, token: api.adminToken, source: "t" }, { clock: realClock });
    expect(await good.request<any>({ path: "/version" })).toMatchObject({ major: "1" });
    const noCa = createKubeClient({ server: api.url, token: api.adminToken, source: "t" }, { clock: realClock });
    await expect(noCa.request({ path: "/version" })).rejects.toThrow(/self.signed|certificate/i);
    const wrongCa = createKubeClient(
      { server: api.url, caPem: (await api.issueClientCert("x")).certPem, token: api.adminToken, source: "t" },
      { clock: realClock },
    );
    await expect(wrongCa.request({ path: "/version" })).rejects.toThrow();
  });

  test("client certificate and key from files named relative to the kubeconfig", async () => {
    const { certPem, keyPem } = await api.issueClientCert("system:node:files", ["system:nodes"]);
    await writeFile(join(dir, "c.pem"), certPem);
    await writeFile(join(dir, "k.pem"), keyPem);
    await writeFile(join(dir, "ca.crt"), api.caPem);
    const path = join(dir, "files.kubeconfig");
    await writeFile(
      path,
      `apiVersion: v1\nkind: Config\ncurrent-context: c\nclusters:\n- name: k\n  cluster:\n    server: ${api.url}\n    certificate-authority: ca.crt\nusers:\n- name: u\n  user:\n    client-certificate: c.pem\n    client-key: k.pem\ncontexts:\n- name: c\n  context:\n    cluster: k\n    user: u\n`,
    );
    const c = createKubeClient(await loadKubeconfig(path), { clock: realClock });
    await c.request({ path: "/api/v1/nodes" });
    expect(whoAmI()).toBe("system:node:files");
  });
});

describe("credentials", () => {
  test("tokenFile is read for the bearer token", async () => {
    await writeFile(join(dir, "token"), `${api.adminToken}\n`);
    const c = createKubeClient({ server: api.url, caPem: api.caPem, tokenFile: join(dir, "token"), source: "t" }, { clock: realClock });
    await c.request({ path: "/api/v1/nodes" });
    expect(whoAmI()).toBe("kubernetes-admin");
  });

  test("an exec credential plugin runs with KUBERNETES_EXEC_INFO and its token is used", async () => {
    const plugin = join(dir, "plugin.sh");
    await writeFile(
      plugin,
      `#!/bin/sh\necho "$KUBERNETES_EXEC_INFO" > ${dir}/exec-info.json\nprintf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"%s"}}' "$TOKEN"\n`,
    );
    await chmod(plugin, 0o755);
    const cfg = await parseKubeconfig(
      JSON.stringify({
        "current-context": "c",
        clusters: [{ name: "k", cluster: { server: api.url, "certificate-authority-data": Buffer.from(api.caPem).toString("base64") } }],
        users: [
          { name: "u", user: { exec: { command: plugin, apiVersion: "client.authentication.k8s.io/v1", env: [{ name: "TOKEN", value: api.adminToken }] } } },
        ],
        contexts: [{ name: "c", context: { cluster: "k", user: "u" } }],
      }),
      join(dir, "exec.kubeconfig"),
    );
    const c = createKubeClient(cfg, { clock: realClock });
    await c.request({ path: "/api/v1/nodes" });
    expect(whoAmI()).toBe("kubernetes-admin");
    expect(JSON.parse(await Bun.file(join(dir, "exec-info.json")).text())).toMatchObject({ kind: "ExecCredential", spec: { interactive: false } });
  });

  test("a bad kubeconfig names the file and the field", async () => {
    await expect(parseKubeconfig("clusters: [{name: k}]\n", "/etc/kubernetes/kubelet.conf")).rejects.toThrow(
      /^invalid kubeconfig \/etc\/kubernetes\/kubelet\.conf: field clusters\.0\.cluster/,
    );
    await expect(parseKubeconfig("current-context: nope\ncontexts: []\n", "/k")).rejects.toThrow('context "nope" not found');
  });
});

test("API errors carry the code and Status reason; responses are validated with zod", async () => {
  const c = createKubeClient({ server: api.url, caPem: api.caPem, token: api.adminToken, source: "t" }, { clock: realClock });
  const node = await c.request({ method: "POST", path: "/api/v1/nodes", body: { metadata: { name: "e1" } }, schema: nodeSchema });
  expect(node.metadata.uid).toBeString();
  await c.request({ method: "PUT", path: "/api/v1/nodes/e1", body: node });
  const stale = await c.request({ method: "PUT", path: "/api/v1/nodes/e1", body: node }).catch((e) => e as ApiError);
  expect(stale).toBeInstanceOf(ApiError);
  expect(isConflict(stale)).toBe(true);
  expect((stale as ApiError).message).toBe(
    'Operation cannot be fulfilled on nodes "e1": the object has been modified; please apply your changes to the latest version and try again',
  );
  expect(isNotFound(await c.request({ path: "/api/v1/nodes/nope" }).catch((e) => e))).toBe(true);
  await expect(c.request({ path: "/version", schema: nodeSchema })).rejects.toThrow(/^unexpected response from GET \/version: field metadata/);
});
