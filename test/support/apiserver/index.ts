// The API-server double (test infrastructure, never a product feature): kube-apiserver for the
// resources the kubelet uses, over TLS on 127.0.0.1 with client-certificate and token
// authentication, plus the one controller the kubelet's TLS bootstrap needs (csrsigning, and
// optionally csrapproving's auto-approval of node client CSRs), and the proxy to kubelets (node
// proxy, pods/exec|attach|portforward|log: proxy.ts), and the TokenReview/SubjectAccessReview answers
// a kubelet's webhook authentication and authorization ask for (reviews.ts). stop()/start() simulate an API
// server restart: the store (etcd's role) survives, connections and watches do not.
//
//   const api = await startApiServer();            // api.url, api.caPem
//   await api.writeKubeconfig(path, { token: api.adminToken });
//   … kubectl --kubeconfig path get nodes …
//   await api.close();                             // removes everything it made
import http from "node:http";
import tls from "node:tls";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Socket } from "node:net";
import { createCA, inspectCsr, issueCert, signCsr, signServingCsr, validateKubeletServingCsr, type CA } from "./pki.ts";
import { createRouter, createUpgradeHandler } from "./router.ts";
import { createMemoryStore, type Change, type Obj, type Store } from "./store.ts";
import { createEtcdStore } from "./store-etcd.ts";
import { etcdAvailable, startEtcd, type Etcd } from "./etcd.ts";
import { createTokenIssuer, ensureNamespaceDefaults } from "./serviceaccounts.ts";

export type { Store, Obj } from "./store.ts";

export interface ApiServerOptions {
  /** "etcd" (default when etcd is installed) or "memory"; env BUNLET_APISERVER_STORE overrides the default. */
  storage?: "etcd" | "memory";
  /** Approve kubelet-serving CSRs by themselves (default false: in a real cluster a person or an approver does). */
  autoApproveServingCsrs?: boolean;
  /** How long kubelet-serving certificates are valid (kube-controller-manager's --cluster-signing-duration; default 1 day). */
  servingCertLifetimeSeconds?: number;
  bookmarkIntervalMs?: number;
}

export interface ApiServerDouble {
  readonly url: string;
  readonly caPem: string;
  readonly ca: CA;
  readonly dir: string;
  readonly adminToken: string;
  readonly bootstrapToken: string;
  /** The storage (etcd or memory) — tests read and write objects through it as a controller would. */
  readonly store: Store;
  /** Which storage backs it. */
  readonly storage: "etcd" | "memory";
  /** Every authenticated request; `upgrade` = the Upgrade header (+ WebSocket subprotocols) of upgrade requests. */
  readonly requests: { method: string; path: string; user: string; userAgent?: string; upgrade?: string }[];
  /** A kubeconfig for the double: token auth, or a client cert/key (PEM) embedded as data. */
  writeKubeconfig(path: string, auth: { token?: string; certPem?: string; keyPem?: string; user?: string }): Promise<void>;
  /** A client certificate for CN/O signed by the cluster CA. */
  issueClientCert(cn: string, orgs?: string[]): Promise<{ certPem: string; keyPem: string }>;
  /** Approves a CSR as `kubectl certificate approve` does (the approval subresource). */
  approveCsr(name: string): Promise<void>;
  /** Verifies a TokenRequest token the double issued: its claims, or undefined. */
  verifyToken(token: string): Record<string, any> | undefined;
  /** Stops serving (connections and watches dropped); the store is kept. */
  stop(): Promise<void>;
  /** Serves again on the same port. */
  start(): Promise<void>;
  close(): Promise<void>;
}

/** kube-controller-manager's csrapproving (node client CSRs from bootstrappers) and csrsigning, on one CSR change. */
interface CsrControllerOpts {
  autoApproveServing: boolean;
  servingLifetimeSeconds: number;
}

const approvedCondition = (reason: string, message: string) => ({
  type: "Approved",
  status: "True",
  reason,
  message,
  lastUpdateTime: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
});

/** kubelet-serving: the signer's validation (Failed/SignerValidationFailure), then the CSR's SANs signed for the lifetime. */
async function signKubeletServing(ca: CA, dir: string, csr: Obj, lifetimeSeconds: number): Promise<string> {
  const pem = Buffer.from(csr.spec.request, "base64").toString("utf8");
  const invalid = validateKubeletServingCsr(await inspectCsr(dir, pem), csr.spec.usages ?? []);
  if (invalid) throw new Error(invalid);
  return signServingCsr(ca, dir, pem, lifetimeSeconds);
}

function csrController(store: Store, ca: CA, dir: string, o: CsrControllerOpts): (c: Change) => void {
  const inFlight = new Set<string>();
  // An auto-approved CSR is signed while its approval is written (kube-controller-manager signs
  // in-process in ~1 ms; the openssl run here takes 10–50 ms): used once the approval is stored.
  const presigned = new Map<string, Promise<string>>();
  const sign = (csr: Obj) => {
    const days = Math.max(1, Math.ceil((csr.spec.expirationSeconds ?? 86400) / 86400));
    const serverAuth = csr.spec?.signerName === "kubernetes.io/kubelet-serving";
    return serverAuth
      ? signKubeletServing(ca, dir, csr, o.servingLifetimeSeconds)
      : signCsr(ca, dir, Buffer.from(csr.spec.request, "base64").toString("utf8"), { days, serverAuth });
  };
  return (c) => {
    if (c.type === "DELETED") return;
    const csr = c.object;
    const conds: Obj[] = csr.status?.conditions ?? [];
    const isNodeClient = csr.spec?.signerName === "kubernetes.io/kube-apiserver-client-kubelet";
    const groups: string[] = csr.spec?.groups ?? [];
    // csrapproving: node client certificates requested with a bootstrap token, or renewed by the node itself.
    const requester = groups.includes("system:bootstrappers") || (groups.includes("system:nodes") && String(csr.spec?.username).startsWith("system:node:"));
    const isServing = csr.spec?.signerName === "kubernetes.io/kubelet-serving";
    const autoApprove = (isNodeClient && requester) || (o.autoApproveServing && isServing);
    if (autoApprove && !conds.length) {
      const message = isServing
        ? "Auto approving kubelet serving certificate (test double)."
        : "Auto approving kubelet client certificate after SubjectAccessReview.";
      const approved = { ...csr, status: { ...csr.status, conditions: [approvedCondition("AutoApproved", message)] } };
      if (csr.spec.signerName?.startsWith("kubernetes.io/")) {
        const signing = sign(csr);
        signing.catch(() => {}); // its error is reported when it is used
        presigned.set(c.key, signing);
      }
      void store.put(c.key, approved, Number(csr.metadata.resourceVersion));
      return;
    }
    const ok = conds.some((x) => x.type === "Approved" && x.status === "True") && !conds.some((x) => x.type === "Denied" || x.type === "Failed");
    if (!ok || csr.status?.certificate || inFlight.has(c.key) || !csr.spec?.signerName?.startsWith("kubernetes.io/")) return;
    inFlight.add(c.key);
    const update = async (status: (cur: Obj) => Obj) => {
      for (let i = 0; i < 5; i++) {
        const cur = await store.get(c.key);
        if (!cur || (await store.put(c.key, { ...cur, status: status(cur) }, Number(cur.metadata.resourceVersion))) !== "conflict") return;
      }
    };
    const signed = presigned.get(c.key) ?? sign(csr);
    presigned.delete(c.key);
    void signed
      .then((pem) => update((cur) => ({ ...cur.status, certificate: Buffer.from(pem).toString("base64") })))
      .catch((e) =>
        update((cur) => ({
          ...cur.status,
          conditions: [...(cur.status?.conditions ?? []), { type: "Failed", status: "True", reason: "SignerValidationFailure", message: String(e.message) }],
        })),
      )
      .finally(() => inFlight.delete(c.key));
  };
}

const NAMESPACES = ["default", "kube-system", "kube-public", "kube-node-lease"];

export async function startApiServer(opts: ApiServerOptions = {}): Promise<ApiServerDouble> {
  const dir = await mkdtemp(join(tmpdir(), "bunlet-apiserver-"));
  const ca = await createCA(join(dir, "pki"));
  const serving = await issueCert(ca, dir, "/CN=kube-apiserver", { serverAuth: true, sans: ["IP:127.0.0.1", "DNS:localhost"] });
  const storage = opts.storage ?? ((process.env.BUNLET_APISERVER_STORE as "etcd" | "memory" | undefined) || (etcdAvailable() ? "etcd" : "memory"));
  let etcd: Etcd | undefined;
  if (storage === "etcd") etcd = await startEtcd();
  const store = etcd ? createEtcdStore(etcd.url) : createMemoryStore();
  const adminToken = crypto.randomUUID().replace(/-/g, "");
  const hex = () => crypto.randomUUID().replace(/-/g, "");
  const bootstrapToken = `${hex().slice(0, 6)}.${hex().slice(0, 16)}`;
  const requests: ApiServerDouble["requests"] = [];
  const watches = new Set<() => void>();
  const sockets = new Set<Socket>();
  let port = 0;
  const csrPrefix = "certificatesigningrequests.certificates.k8s.io/";
  const unsubscribeCsr = await store.watch(
    csrPrefix,
    await store.revision(),
    csrController(store, ca, dir, {
      autoApproveServing: opts.autoApproveServingCsrs ?? false,
      servingLifetimeSeconds: opts.servingCertLifetimeSeconds ?? 86400,
    }),
  );
  for (const name of NAMESPACES) {
    await store.put(`namespaces//${name}`, {
      kind: "Namespace",
      apiVersion: "v1",
      metadata: { name, uid: crypto.randomUUID(), creationTimestamp: new Date().toISOString().replace(/\.\d+Z$/, "Z") },
      spec: { finalizers: ["kubernetes"] },
      status: { phase: "Active" },
    });
    await ensureNamespaceDefaults(store, name, ca.certPem);
  }
  // serviceaccounts-controller and root-ca-cert-publisher for namespaces created later.
  const unsubscribeNs = await store.watch("namespaces/", await store.revision(), (c) => {
    if (c.type !== "DELETED") void ensureNamespaceDefaults(store, c.object.metadata.name, ca.certPem).catch(() => {});
  });
  const tokens = createTokenIssuer();

  // kube-apiserver's --kubelet-client-certificate: system:masters, as kubeadm's apiserver-kubelet-client.
  const kubeletClient = await issueCert(ca, dir, "/O=system:masters/CN=kube-apiserver-kubelet-client");
  const auth = { adminToken, bootstrapTokens: new Set([bootstrapToken]) };
  const reviews = { auth, tokens };
  const routerDeps = {
    store,
    auth,
    tokens,
    reviews,
    watch: { bookmarkIntervalMs: opts.bookmarkIntervalMs ?? 1000, track: (close: () => void) => (watches.add(close), () => watches.delete(close)) },
    serverAddress: () => `127.0.0.1:${port}`,
    kubeletClient,
    onRequest: (r: ApiServerDouble["requests"][number]) => requests.push(r),
  };
  const httpServer = http.createServer(createRouter(routerDeps));
  // Upgrade requests (kubectl exec/attach/port-forward) to the kubelet: spliced, as kube-apiserver's proxy.
  httpServer.on("upgrade", createUpgradeHandler(routerDeps));
  let tlsServer: tls.Server | undefined;

  async function start(): Promise<void> {
    tlsServer = tls.createServer({ key: serving.keyPem, cert: serving.certPem, ca: ca.certPem, requestCert: true, rejectUnauthorized: false }, (s) => {
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
      s.on("error", () => {});
      httpServer.emit("connection", s);
    });
    await new Promise<void>((ok, fail) => {
      tlsServer!.once("error", fail);
      tlsServer!.listen(port, "127.0.0.1", () => ok());
    });
    port = (tlsServer.address() as { port: number }).port;
  }

  async function stop(): Promise<void> {
    for (const w of [...watches]) w();
    for (const s of sockets) s.destroy();
    sockets.clear();
    const srv = tlsServer;
    tlsServer = undefined;
    if (srv) await new Promise<void>((ok) => srv.close(() => ok()));
  }

  await start();
  const url = `https://127.0.0.1:${port}`;
  return {
    url,
    caPem: ca.certPem,
    ca,
    dir,
    adminToken,
    bootstrapToken,
    store,
    storage,
    requests,
    async writeKubeconfig(path, auth) {
      const user: Obj = {};
      if (auth.token) user.token = auth.token;
      if (auth.certPem) user["client-certificate-data"] = Buffer.from(auth.certPem).toString("base64");
      if (auth.keyPem) user["client-key-data"] = Buffer.from(auth.keyPem).toString("base64");
      const name = auth.user ?? "user";
      await writeFile(
        path,
        JSON.stringify(
          {
            apiVersion: "v1",
            kind: "Config",
            "current-context": "double",
            clusters: [{ name: "double", cluster: { server: url, "certificate-authority-data": Buffer.from(ca.certPem).toString("base64") } }],
            users: [{ name, user }],
            contexts: [{ name: "double", context: { cluster: "double", user: name } }],
          },
          null,
          2,
        ),
        { mode: 0o600 },
      );
    },
    async approveCsr(name) {
      const key = `${csrPrefix}/${name}`; // cluster-scoped: an empty namespace segment
      for (let i = 0; i < 5; i++) {
        const cur = await store.get(key);
        if (!cur) throw new Error(`certificatesigningrequest ${name} not found`);
        const status = {
          ...cur.status,
          conditions: [...(cur.status?.conditions ?? []), approvedCondition("KubectlApprove", "This CSR was approved by kubectl certificate approve.")],
        };
        if ((await store.put(key, { ...cur, status }, Number(cur.metadata.resourceVersion))) !== "conflict") return;
      }
      throw new Error(`certificatesigningrequest ${name}: conflicts while approving`);
    },
    verifyToken: (token) => tokens.verify(token),
    issueClientCert: (cn, orgs = []) => issueCert(ca, dir, `/${orgs.map((o) => `O=${o}/`).join("")}CN=${cn}`),
    stop,
    start,
    async close() {
      unsubscribeCsr();
      unsubscribeNs();
      await stop();
      httpServer.close();
      await store.close();
      await etcd?.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
