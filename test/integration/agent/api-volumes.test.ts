// Volumes and env that need the API server, end to end against a real control plane
// (test/support/upstream): pods created with kubectl run on containerd, and the containers see what a
// cluster gives them — secret (on tmpfs) and configMap files in the atomic writer's layout, env from
// secretKeyRef/configMapKeyRef/envFrom with $(VAR) expansion, a service's environment variables, the
// automatic kube-api-access volume (a
// token kube-apiserver issued for the pod, which its TokenReview accepts; kube-root-ca.crt; the
// namespace) and an explicit projected token for another audience. An updated secret reaches the file; a
// pod whose secret is missing waits in ContainerCreating with upstream's FailedMount event and starts once
// it exists; the node watches only the objects its pods reference (the API server's audit log).
// Needs root, containerd and the upstream binaries.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { canRunContainerd } from "../../support/containerd.ts";
import { parsePromText } from "../../support/prom-text.ts";
import { appPod, NODE_NAME, startUpstreamCluster, upstreamBinDir, type UpstreamCluster } from "../../support/upstream/index.ts";
import { until } from "../../support/wait.ts";

const SA_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";
const bin = upstreamBinDir();
if (!bin.dir) console.warn(`skipping the API volume tests: ${bin.why}`);

describe.skipIf(!canRunContainerd() || !bin.dir)("API volumes and env", () => {
  let c: UpstreamCluster;
  const kubectl = (...args: string[]) => c.cp.kubectl(...args);
  const apply = (doc: object) => c.cp.kubectlIn(JSON.stringify(doc), "apply", "-f", "-");
  const exec = (pod: string, cmd: string) => kubectl("exec", pod, "-c", "app", "--", "sh", "-c", cmd);
  const container = async (pod: string) => (await c.json("get", "pod", pod)).status.containerStatuses?.[0];
  /** kube-apiserver's TokenReview of `token` (for `audiences`, else its own). */
  const review = async (token: string, audiences?: string[]) =>
    JSON.parse(
      await c.cp.kubectlIn(
        JSON.stringify({ apiVersion: "authentication.k8s.io/v1", kind: "TokenReview", spec: { token, ...(audiences ? { audiences } : {}) } }),
        "create",
        "-f",
        "-",
        "-o",
        "json",
      ),
    ).status;
  const claims = (jwt: string) => JSON.parse(Buffer.from(jwt.split(".")[1]!, "base64url").toString());

  beforeAll(async () => {
    c = await startUpstreamCluster({ name: "apivol", binDir: bin.dir!, audit: true, config: ["syncFrequency: 2s", "nodeStatusUpdateFrequency: 2s"] });
    await kubectl("create", "secret", "generic", "app-secret", "--from-literal=username=admin", "--from-literal=password=s3cret");
    await kubectl("create", "configmap", "app-config", "--from-literal=greeting=hello", "--from-literal=LOG_LEVEL=debug", "--from-literal=bad=key=x");
    await kubectl("create", "service", "clusterip", "web-front", "--tcp=80:8080", "--clusterip=10.96.0.42");
  }, 300_000);

  afterAll(async () => {
    await c?.stop();
  }, 120_000);

  const podName = `vols-${NODE_NAME}`;

  test("secret, configMap, projected token and kube-api-access files and env are in the container", async () => {
    await apply(
      appPod(
        podName,
        c.n.ctd.images.busybox,
        {
          env: [
            { name: "DB_USER", valueFrom: { secretKeyRef: { name: "app-secret", key: "username" } } },
            { name: "GREETING", valueFrom: { configMapKeyRef: { name: "app-config", key: "greeting" } } },
            { name: "DSN", value: "db://$(DB_USER)@host/$(UNDEFINED)" },
            { name: "MISSING_OK", valueFrom: { secretKeyRef: { name: "nope", key: "k", optional: true } } },
          ],
          envFrom: [{ configMapRef: { name: "app-config" }, prefix: "CFG_" }],
          volumeMounts: [
            { name: "secret", mountPath: "/etc/secret" },
            { name: "config", mountPath: "/etc/config" },
            { name: "vault-token", mountPath: "/var/run/vault" },
          ],
        },
        {
          volumes: [
            { name: "secret", secret: { secretName: "app-secret", defaultMode: 0o400 } },
            { name: "config", configMap: { name: "app-config", items: [{ key: "greeting", path: "msgs/greeting.txt", mode: 0o640 }] } },
            {
              name: "vault-token",
              projected: {
                sources: [
                  { serviceAccountToken: { audience: "vault", expirationSeconds: 600, path: "token" } },
                  { secret: { name: "app-secret", items: [{ key: "username", path: "user" }] } },
                ],
              },
            },
          ],
        },
      ),
    );
    const obj = await c.podInPhase(podName, "Running", 120_000);
    // kube-apiserver's ServiceAccount admission added the service account and its volume.
    expect(obj.spec.serviceAccountName).toBe("default");
    const access = obj.spec.volumes.find((v: any) => v.name.startsWith("kube-api-access-"));
    expect(access.projected.sources.map((s: any) => Object.keys(s)[0])).toEqual(["serviceAccountToken", "configMap", "downwardAPI"]);

    expect(await exec(podName, "cat /etc/secret/username; echo; cat /etc/secret/password")).toBe("admin\ns3cret");
    expect(await exec(podName, "stat -L -c %a /etc/secret/username")).toBe("400\n");
    expect(await exec(podName, "cat /etc/config/msgs/greeting.txt; stat -L -c %a /etc/config/msgs/greeting.txt")).toBe("hello640\n");
    // The volume's directory is 0777 as upstream's wrapped emptyDir: a non-root user reaches the files.
    expect(await exec(podName, "stat -c %a /etc/config")).toBe("777\n");
    expect(await exec(podName, "ls /etc/config")).toBe("msgs\n");
    const env = Object.fromEntries(
      (await exec(podName, "env"))
        .trim()
        .split("\n")
        .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
    );
    expect(env).toMatchObject({ DB_USER: "admin", GREETING: "hello", DSN: "db://admin@host/$(UNDEFINED)", CFG_greeting: "hello", CFG_LOG_LEVEL: "debug" });
    expect(env.MISSING_OK).toBeUndefined();
    expect(env.CFG_bad).toBe("key=x");
    // The service environment variables of the pod's namespace (enableServiceLinks defaults to true).
    expect(env).toMatchObject({ WEB_FRONT_SERVICE_HOST: "10.96.0.42", WEB_FRONT_SERVICE_PORT: "80", WEB_FRONT_PORT_80_TCP_ADDR: "10.96.0.42" });
    // The automatic service account volume: a token bound to this pod, the cluster CA, the namespace.
    const token = await exec(podName, `cat ${SA_DIR}/token`);
    expect(await review(token)).toMatchObject({
      authenticated: true,
      user: { username: "system:serviceaccount:default:default", extra: { "authentication.kubernetes.io/pod-name": [podName] } },
    });
    const bound = claims(token);
    expect(bound["kubernetes.io"]).toMatchObject({ namespace: "default", serviceaccount: { name: "default" }, pod: { name: podName, uid: obj.metadata.uid } });
    // The kubelet asks for 3607 s; kube-apiserver (--service-account-extend-token-expiration) issues a
    // longer token and warns of its use after 3607 s.
    expect(bound["kubernetes.io"].warnafter - bound.iat).toBe(3607);
    expect(await exec(podName, `cat ${SA_DIR}/ca.crt`)).toBe(c.cp.ca.certPem);
    expect(await exec(podName, `cat ${SA_DIR}/namespace`)).toBe("default");
    const vault = await exec(podName, "cat /var/run/vault/token");
    expect(claims(vault).aud).toEqual(["vault"]);
    expect(await review(vault, ["vault"])).toMatchObject({ authenticated: true, audiences: ["vault"] });
    expect(await exec(podName, "cat /var/run/vault/user")).toBe("admin");
    expect((await exec(podName, `touch ${SA_DIR}/x 2>&1 || echo read-only`)).trim()).toMatch(/read-only/i);

    // On the host: the atomic writer's layout; the secret volume is a tmpfs, the configMap one is not.
    const volumes = join(c.n.rootDir, "pods", obj.metadata.uid, "volumes");
    const secretDir = join(volumes, "kubernetes.io~secret", "secret");
    expect(readlinkSync(join(secretDir, "..data"))).toMatch(/^\.\.\d{4}_\d\d_\d\d_\d\d_\d\d_\d\d\.\d+$/);
    expect(readlinkSync(join(secretDir, "username"))).toBe("..data/username");
    const mounts = readFileSync("/proc/self/mountinfo", "utf8");
    expect(mounts).toContain(` ${secretDir} `);
    expect(mounts).not.toContain(` ${join(volumes, "kubernetes.io~configmap", "config")} `);
  }, 240_000);

  test("an updated secret and configMap reach the files; a deleted secret leaves the last files and the pod running", async () => {
    const v2 = await kubectl(
      "create",
      "secret",
      "generic",
      "app-secret",
      "--from-literal=username=root",
      "--from-literal=password=n3w",
      "--dry-run=client",
      "-o",
      "json",
    );
    await c.cp.kubectlIn(v2, "apply", "-f", "-");
    await until("secret update in the file", async () => (await exec(podName, "cat /etc/secret/password")) === "n3w", 60_000, { intervalMs: 500 });
    expect(await exec(podName, "cat /var/run/vault/user")).toBe("root");
    await kubectl("patch", "configmap", "app-config", "-p", '{"data":{"greeting":"bonjour"}}');
    await until("configMap update in the file", async () => (await exec(podName, "cat /etc/config/msgs/greeting.txt")) === "bonjour", 60_000, {
      intervalMs: 500,
    });
    // env is fixed at container start, as upstream.
    expect(await exec(podName, "echo $DB_USER")).toBe("admin\n");
    expect((await container(podName)).restartCount).toBe(0);
    // A deleted secret: the mounted volume keeps its last files and the pod keeps running (a refresh
    // failure is a FailedMount warning, not a stop), as upstream's volume manager; the node's /metrics
    // counts the failed refresh.
    const secretMountErrors = async () =>
      parsePromText(await (await c.nodeRequest("/metrics")).text())
        .get("storage_operation_errors_total")
        ?.samples.find((x) => x.labels.volume_plugin === "kubernetes.io/secret" && x.labels.operation_name === "volume_mount")?.value ?? 0;
    const errorsBefore = await secretMountErrors();
    await kubectl("delete", "secret", "app-secret");
    await until("a failed refresh of the secret volume", async () => (await secretMountErrors()) > errorsBefore, 30_000, { intervalMs: 500 });
    expect(await exec(podName, "cat /etc/secret/password")).toBe("n3w");
    const after = await c.json("get", "pod", podName);
    expect(after.status.phase).toBe("Running");
    expect(after.status.containerStatuses[0].state.running).toBeDefined();
  }, 180_000);

  test("a missing secret: the pod waits in ContainerCreating with upstream's FailedMount event, then starts", async () => {
    const name = `late-${NODE_NAME}`;
    await apply(
      appPod(
        name,
        c.n.ctd.images.busybox,
        { volumeMounts: [{ name: "s", mountPath: "/s" }] },
        { automountServiceAccountToken: false, volumes: [{ name: "s", secret: { secretName: "later" } }] },
      ),
    );
    const message = 'MountVolume.SetUp failed for volume "s" : secret "later" not found';
    const ev = await until(
      "FailedMount event",
      async () => (await c.json("get", "events")).items.find((e: any) => e.reason === "FailedMount" && e.involvedObject?.name === name),
      60_000,
      { intervalMs: 500 },
    );
    expect(ev).toMatchObject({ type: "Warning", message });
    const pod = await c.json("get", "pod", name);
    expect(pod.status.phase).toBe("Pending");
    expect(pod.status.containerStatuses[0].state.waiting.reason).toBe("ContainerCreating");
    expect((await c.n.ctd.cri.listPodSandbox()).filter((s) => s.metadata?.name === name)).toEqual([]);
    await kubectl("create", "secret", "generic", "later", "--from-literal=k=v");
    await c.podInPhase(name, "Running", 120_000);
    expect(await exec(name, "cat /s/k")).toBe("v");
  }, 240_000);

  test("a missing configMap key for env: CreateContainerConfigError with upstream's message", async () => {
    const name = `badenv-${NODE_NAME}`;
    await apply(appPod(name, c.n.ctd.images.busybox, { env: [{ name: "X", valueFrom: { configMapKeyRef: { name: "app-config", key: "absent" } } }] }));
    const waiting = await until(
      "CreateContainerConfigError",
      async () => {
        const w = (await container(name))?.state?.waiting;
        return w?.reason === "CreateContainerConfigError" ? w : undefined;
      },
      120_000,
      { intervalMs: 500 },
    );
    expect(waiting).toEqual({ reason: "CreateContainerConfigError", message: "couldn't find key absent in ConfigMap default/app-config" });
  }, 180_000);

  test("the node watches only the objects its pods reference, one at a time", () => {
    const watches = c
      .audit!.events()
      .filter((e) => e.user.username === `system:node:${c.n.node}` && e.verb === "watch" && ["secrets", "configmaps"].includes(e.objectRef?.resource ?? ""))
      .map((e) => decodeURIComponent(e.requestURI));
    expect(watches.some((p) => p.includes("fieldSelector=metadata.name=app-secret"))).toBe(true);
    expect(watches.every((p) => p.includes("fieldSelector=metadata.name="))).toBe(true);
  });
});
