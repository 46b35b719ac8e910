// A real one-node Kubernetes control plane on loopback, from the upstream binaries that
// scripts/upstream/build.sh builds: Debian's etcd, kube-apiserver (Node+RBAC authorization,
// NodeRestriction and the default admission plugins, bootstrap tokens, service-account issuer and
// keys), kube-controller-manager (CSR approving and signing with the cluster CA, service accounts and
// tokens, namespaces, node lifecycle, garbage collector, bootstrap signer) and kube-scheduler. It
// writes an admin kubeconfig and a bootstrap kubeconfig, as `kubeadm init` and `kubeadm token create`
// would. Every process runs in its own process group and is recorded in <dir>/pids, so `stop()` — or
// `stopControlPlaneDir(dir)` from another process, for `scripts/upstream/cluster.sh down` — ends them.
// kube-apiserver alone can be stopped and started again on the same port and etcd (a node's view of
// an API server restart), and can keep an audit log: the real server's own record of who asked what.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { etcdArgs } from "../apiserver/etcd.ts";
import { createCA, issueCert, type CA } from "../apiserver/pki.ts";
import { freePort } from "../binary.ts";
import { until } from "../wait.ts";
import { bootstrapObjects, kubeconfigYaml, randomToken } from "./objects.ts";
import { removeTree } from "../remove-tree.ts";

export interface ControlPlaneOptions {
  /** Where certificates, kubeconfigs, etcd data and logs go (created; removed by stop() unless keepDir). */
  dir: string;
  /** The upstream binaries (kube-apiserver, kube-controller-manager, kube-scheduler[, kubectl]). */
  binDir: string;
  /** kube-apiserver's secure port (default: a free one). */
  port?: number;
  /** Keep the directory on stop() (the CLI keeps it so its logs can be read after `down`). */
  keepDir?: boolean;
  /** Write kube-apiserver's audit log (AUDIT_POLICY) to <dir>/logs/audit.log; auditEvents() reads it. */
  audit?: boolean;
  /** Extra kube-apiserver flags (an API group or feature gate a test needs). */
  apiserverFlags?: string[];
}

/** One line of kube-apiserver's audit log (audit.k8s.io/v1 Event), the fields the tests read. */
export interface AuditEvent {
  /** One request's ID, the same in each of its stages' events. */
  auditID: string;
  stage: string;
  requestReceivedTimestamp: string;
  verb: string;
  requestURI: string;
  user: { username: string; groups?: string[] };
  objectRef?: { resource?: string; subresource?: string; name?: string; namespace?: string; apiGroup?: string };
  responseStatus?: { code?: number };
  requestObject?: any;
  responseObject?: any;
}

/**
 * What the audit log records: the token and access reviews in full (who asked, about whom, the answer),
 * the body of the nodes' pod deletes (DeleteOptions with their preconditions) and pod status patches,
 * and every other request of a node by verb and object; nothing else. One event per request
 * (ResponseComplete).
 */
export const AUDIT_POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: RequestResponse
    resources:
      - { group: authentication.k8s.io, resources: [tokenreviews] }
      - { group: authorization.k8s.io, resources: [subjectaccessreviews] }
  - { level: Request, userGroups: ["system:nodes"], verbs: [delete, patch], resources: [{ group: "", resources: [pods, pods/status] }] }
  - { level: Metadata, userGroups: ["system:nodes"] }
  - level: None
`;

export interface ControlPlane {
  dir: string;
  /** https://127.0.0.1:<port> */
  server: string;
  caFile: string;
  ca: CA;
  /** The admin kubeconfig (system:masters). */
  admin: string;
  /** A bootstrap kubeconfig with a bootstrap token of group system:bootstrappers:kubeadm:default-node-token. */
  bootstrap: string;
  /** kubectl: the release's own when built, else the machine's. */
  kubectlBinary: string;
  /** kubectl as the cluster admin; throws with its stderr on a non-zero exit. */
  kubectl(...args: string[]): Promise<string>;
  /** Like kubectl but feeds `input` on stdin (for `apply -f -`). */
  kubectlIn(input: string, ...args: string[]): Promise<string>;
  /** Stops kube-apiserver alone (SIGTERM, as a restart would); etcd, the controller-manager and the scheduler keep running. */
  stopApiServer(): Promise<void>;
  /** Starts kube-apiserver again on the same port and etcd; resolves once /readyz answers ok. */
  startApiServer(): Promise<void>;
  /** The audit log's events so far, oldest first (empty without the audit option). */
  auditEvents(): AuditEvent[];
  /** Writes a kubeconfig for system:node:<node> with a client certificate of the cluster CA (a node's after its TLS bootstrap). */
  nodeKubeconfig(path: string, node: string): Promise<string>;
  stop(): Promise<void>;
}

const PIDS = "pids";

/** Starts a process in its own process group, its output appended to <dir>/logs/<name>.log. */
function launch(dir: string, name: string, argv: string[]): number {
  mkdirSync(join(dir, "logs"), { recursive: true });
  const out = openSync(join(dir, "logs", `${name}.log`), "a");
  const child = spawn(argv[0]!, argv.slice(1), { detached: true, stdio: ["ignore", out, out] });
  child.unref();
  if (child.pid === undefined) throw new Error(`${name}: could not start ${argv[0]}`);
  writeFileSync(join(dir, PIDS), `${child.pid} ${name}\n`, { flag: "a" });
  return child.pid;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The processes recorded in <dir>/pids, oldest first. */
function recorded(dir: string): { pid: number; name: string }[] {
  const file = join(dir, PIDS);
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => ({ pid: Number(l.split(" ")[0]), name: l.split(" ")[1] ?? "" }));
}

/** SIGTERM to each process group, SIGKILL to those still alive after 10 s; resolves once all are gone. */
async function endGroups(pids: number[]): Promise<void> {
  for (const pid of pids)
    try {
      process.kill(-pid, "SIGTERM");
    } catch {}
  const deadline = Date.now() + 10_000;
  while (pids.some(alive) && Date.now() < deadline) await Bun.sleep(50);
  for (const pid of pids.filter(alive))
    try {
      process.kill(-pid, "SIGKILL");
    } catch {}
  const killed = Date.now() + 5_000;
  while (pids.some(alive) && Date.now() < killed) await Bun.sleep(50);
}

/** Ends the processes of <dir>/pids named `name` and drops them from the file; the others keep running. */
async function stopComponent(dir: string, name: string): Promise<void> {
  const all = recorded(dir);
  await endGroups(all.filter((p) => p.name === name).map((p) => p.pid));
  const rest = recorded(dir).filter((p) => p.name !== name);
  writeFileSync(join(dir, PIDS), rest.map((p) => `${p.pid} ${p.name}\n`).join(""));
}

/** Ends every process recorded in <dir>/pids (SIGTERM to its group, SIGKILL after 10 s), newest first. */
export async function stopControlPlaneDir(dir: string): Promise<void> {
  const file = join(dir, PIDS);
  if (!existsSync(file)) return;
  await endGroups(
    recorded(dir)
      .map((p) => p.pid)
      .reverse(),
  );
  rmSync(file, { force: true });
}

async function run(argv: string[], env: Record<string, string>, input?: string): Promise<string> {
  const p = Bun.spawn(argv, { stdin: input === undefined ? "ignore" : new Blob([input]), stdout: "pipe", stderr: "pipe", env: { ...process.env, ...env } });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  if (code !== 0) throw new Error(`${argv.slice(0, 4).join(" ")}…: exit ${code}: ${err.trim()}`);
  return out;
}

interface Pki {
  ca: CA;
  files: Record<"apiserver" | "kubeletClient" | "admin" | "controllerManager" | "scheduler", { cert: string; key: string }>;
  saKey: string;
  saPub: string;
}

/** The cluster CA, the API server's serving and kubelet-client certificates, the components' client certificates, the service-account key pair. */
async function makePki(dir: string): Promise<Pki> {
  const pki = join(dir, "pki");
  const ca = await createCA(pki, "kubernetes");
  const apiserverSans = [
    "IP:127.0.0.1",
    "IP:10.96.0.1",
    "DNS:localhost",
    "DNS:kubernetes",
    "DNS:kubernetes.default",
    "DNS:kubernetes.default.svc",
    "DNS:kubernetes.default.svc.cluster.local",
  ];
  const subjects: Record<keyof Pki["files"], [string, { serverAuth?: boolean; sans?: string[] }]> = {
    apiserver: ["/CN=kube-apiserver", { serverAuth: true, sans: apiserverSans }],
    kubeletClient: ["/O=system:masters/CN=kube-apiserver-kubelet-client", {}],
    admin: ["/O=system:masters/CN=kubernetes-admin", {}],
    controllerManager: ["/CN=system:kube-controller-manager", {}],
    scheduler: ["/CN=system:kube-scheduler", {}],
  };
  const files = {} as Pki["files"];
  for (const [name, [subject, opts]] of Object.entries(subjects) as [keyof Pki["files"], [string, { serverAuth?: boolean; sans?: string[] }]][]) {
    const { certPem, keyPem } = await issueCert(ca, pki, subject, opts);
    files[name] = { cert: join(pki, `${name}.crt`), key: join(pki, `${name}.key`) };
    writeFileSync(files[name].cert, certPem);
    writeFileSync(files[name].key, keyPem, { mode: 0o600 });
  }
  const saKey = join(pki, "sa.key");
  const saPub = join(pki, "sa.pub");
  await run(["openssl", "ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", saKey], {});
  await run(["openssl", "ec", "-in", saKey, "-pubout", "-out", saPub], {});
  return { ca, files, saKey, saPub };
}

function writeKubeconfig(path: string, server: string, ca: CA, user: { cert?: string; key?: string; token?: string }): string {
  writeFileSync(
    path,
    kubeconfigYaml(server, ca.certPem, {
      ...(user.cert ? { "client-certificate-data": Buffer.from(readFileSync(user.cert)).toString("base64") } : {}),
      ...(user.key ? { "client-key-data": Buffer.from(readFileSync(user.key)).toString("base64") } : {}),
      ...(user.token ? { token: user.token } : {}),
    }),
    { mode: 0o600 },
  );
  return path;
}

/** kube-apiserver's audit flags: the policy in <dir>, the log among the components' logs, written before each answer. */
function auditArgs(dir: string): string[] {
  const policy = join(dir, "audit-policy.yaml");
  writeFileSync(policy, AUDIT_POLICY);
  return [`--audit-policy-file=${policy}`, `--audit-log-path=${join(dir, "logs", "audit.log")}`, "--audit-log-mode=blocking"];
}

function apiserverArgs(bin: string, pki: Pki, etcdUrl: string, port: number): string[] {
  return [
    join(bin, "kube-apiserver"),
    `--etcd-servers=${etcdUrl}`,
    "--bind-address=127.0.0.1",
    `--secure-port=${port}`,
    "--advertise-address=127.0.0.1",
    // The `kubernetes` Service's endpoints may not be a loopback address; nothing here routes to it.
    "--endpoint-reconciler-type=none",
    `--tls-cert-file=${pki.files.apiserver.cert}`,
    `--tls-private-key-file=${pki.files.apiserver.key}`,
    `--client-ca-file=${pki.ca.certFile}`,
    `--kubelet-client-certificate=${pki.files.kubeletClient.cert}`,
    `--kubelet-client-key=${pki.files.kubeletClient.key}`,
    // The node's Hostname address (`localhost`, node.ts NODE_NAME) first: the node's port on loopback.
    "--kubelet-preferred-address-types=Hostname,InternalIP,ExternalIP",
    "--authorization-mode=Node,RBAC",
    "--enable-admission-plugins=NodeRestriction",
    "--enable-bootstrap-token-auth=true",
    "--allow-privileged=true",
    "--service-cluster-ip-range=10.96.0.0/12",
    "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
    `--service-account-key-file=${pki.saPub}`,
    `--service-account-signing-key-file=${pki.saKey}`,
  ];
}

/** What kube-controller-manager and kube-scheduler share: their kubeconfig for everything, loopback, no leader election. */
function componentArgs(binary: string, kubeconfig: string): string[] {
  const auth = [`--kubeconfig=${kubeconfig}`, `--authentication-kubeconfig=${kubeconfig}`, `--authorization-kubeconfig=${kubeconfig}`];
  return [binary, ...auth, "--bind-address=127.0.0.1", `--secure-port=${freePort()}`, "--leader-elect=false"];
}

function controllerManagerArgs(bin: string, pki: Pki, kubeconfig: string): string[] {
  return [
    ...componentArgs(join(bin, "kube-controller-manager"), kubeconfig),
    "--controllers=*,bootstrapsigner,tokencleaner",
    "--use-service-account-credentials=true",
    `--cluster-signing-cert-file=${pki.ca.certFile}`,
    `--cluster-signing-key-file=${pki.ca.keyFile}`,
    `--root-ca-file=${pki.ca.certFile}`,
    `--service-account-private-key-file=${pki.saKey}`,
  ];
}

function schedulerArgs(bin: string, kubeconfig: string): string[] {
  return componentArgs(join(bin, "kube-scheduler"), kubeconfig);
}

function startEtcd(dir: string): string {
  const [client, peer] = [freePort(), freePort()];
  launch(dir, "etcd", etcdArgs({ name: "upstream", dataDir: join(dir, "etcd"), client, peer, logLevel: "warn" }));
  return `http://127.0.0.1:${client}`;
}

function logTail(dir: string, name: string): string {
  try {
    return readFileSync(join(dir, "logs", `${name}.log`), "utf8").slice(-3000);
  } catch {
    return "";
  }
}

function readAudit(dir: string): AuditEvent[] {
  const file = join(dir, "logs", "audit.log");
  if (!existsSync(file)) return [];
  // The last piece is empty, or a line still being written.
  return readFileSync(file, "utf8")
    .split("\n")
    .slice(0, -1)
    .map((l) => JSON.parse(l) as AuditEvent);
}

/** Polls `probe` (a throw counts as not yet) until it holds; on timeout, the error carries the component's log tail. */
async function ready(dir: string, component: string, what: string, probe: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  await until(`${component}: ${what}`, async () => (await probe()) || undefined, timeoutMs, { intervalMs: 100, retryErrors: true }).catch((e) => {
    throw new Error(`${(e as Error).message}\n--- ${component} log ---\n${logTail(dir, component)}`);
  });
}

/** Starts the control plane; see the file header. Ready when /readyz answers ok and the bootstrap token works. */
export async function startControlPlane(o: ControlPlaneOptions): Promise<ControlPlane> {
  mkdirSync(o.dir, { recursive: true });
  const stop = async () => {
    await stopControlPlaneDir(o.dir);
    if (!o.keepDir) removeTree(o.dir);
  };
  try {
    const pki = await makePki(o.dir);
    const port = o.port ?? freePort();
    const server = `https://127.0.0.1:${port}`;
    const kubeconfigs = {
      admin: writeKubeconfig(join(o.dir, "admin.kubeconfig"), server, pki.ca, pki.files.admin),
      cm: writeKubeconfig(join(o.dir, "controller-manager.kubeconfig"), server, pki.ca, pki.files.controllerManager),
      sched: writeKubeconfig(join(o.dir, "scheduler.kubeconfig"), server, pki.ca, pki.files.scheduler),
    };
    const etcdUrl = startEtcd(o.dir);
    await ready(o.dir, "etcd", "health", () => fetch(`${etcdUrl}/health`).then((r) => r.ok), 20_000);
    const apiserver = [...apiserverArgs(o.binDir, pki, etcdUrl, port), ...(o.audit ? auditArgs(o.dir) : []), ...(o.apiserverFlags ?? [])];
    const kubectlBinary = existsSync(join(o.binDir, "kubectl")) ? join(o.binDir, "kubectl") : "kubectl";
    const env = { KUBECONFIG: kubeconfigs.admin, HOME: o.dir };
    const kubectl = (...args: string[]) => run([kubectlBinary, ...args], env);
    const kubectlIn = (input: string, ...args: string[]) => run([kubectlBinary, ...args], env, input);
    const startApiServer = async () => {
      launch(o.dir, "kube-apiserver", apiserver);
      await ready(o.dir, "kube-apiserver", "/readyz", async () => (await kubectl("get", "--raw", "/readyz")).trim() === "ok", 90_000);
    };
    await startApiServer();
    launch(o.dir, "kube-controller-manager", controllerManagerArgs(o.binDir, pki, kubeconfigs.cm));
    launch(o.dir, "kube-scheduler", schedulerArgs(o.binDir, kubeconfigs.sched));
    const token = randomToken();
    await kubectlIn(bootstrapObjects(token), "apply", "-f", "-");
    const bootstrap = writeKubeconfig(join(o.dir, "bootstrap-kubelet.kubeconfig"), server, pki.ca, { token: `${token.id}.${token.secret}` });
    // The default service account of `default` exists once the controller-manager runs.
    await ready(
      o.dir,
      "kube-controller-manager",
      "the default service account",
      async () => Boolean(await kubectl("get", "serviceaccount", "default", "-o", "name")),
      60_000,
    );
    return {
      dir: o.dir,
      server,
      caFile: pki.ca.certFile,
      ca: pki.ca,
      admin: kubeconfigs.admin,
      bootstrap,
      kubectlBinary,
      kubectl,
      kubectlIn,
      stopApiServer: () => stopComponent(o.dir, "kube-apiserver"),
      startApiServer,
      auditEvents: () => readAudit(o.dir),
      nodeKubeconfig: async (path, node) => {
        const c = await issueCert(pki.ca, join(o.dir, "pki"), `/O=system:nodes/CN=system:node:${node}`);
        const b64 = (pem: string) => Buffer.from(pem).toString("base64");
        writeFileSync(path, kubeconfigYaml(server, pki.ca.certPem, { "client-certificate-data": b64(c.certPem), "client-key-data": b64(c.keyPem) }), {
          mode: 0o600,
        });
        return path;
      },
      stop,
    };
  } catch (e) {
    await stop().catch(() => {});
    throw e;
  }
}
