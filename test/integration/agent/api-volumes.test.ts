// Volumes and env that need the API server, end to end: the node agent joined to the API-server
// double runs pods created with kubectl on containerd, and the containers see what a real cluster
// gives them — secret (on tmpfs) and configMap files in the atomic writer's layout, env from
// secretKeyRef/configMapKeyRef/envFrom with $(VAR) expansion, a service's environment variables, the automatic kube-api-access volume
// (a TokenRequest token bound to the pod, kube-root-ca.crt, the namespace) and an explicit projected
// token for another audience. An updated secret reaches the file; a pod whose secret is missing
// waits in ContainerCreating with upstream's FailedMount message and starts once it exists.
// Needs root and containerd (skipped otherwise); run under flock with the other heavy tests.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, lstatSync, readFileSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import type { NodeAgent } from "../../../src/agent.ts";
import type { ApiServerDouble } from "../../support/apiserver/index.ts";
import { canRunContainerd, type TestContainerd } from "../../support/containerd.ts";
import { clusterPaths, joinDouble, type JoinedNode } from "../../support/cluster.ts";
import { until } from "../../support/wait.ts";
import { parsePromText } from "../../support/prom-text.ts";

const { node: NODE, base: BASE } = clusterPaths("apivol");
const ROOT = join(BASE, "root");
const SA_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";

describe.skipIf(!canRunContainerd())("API volumes and env", () => {
  let ctd: TestContainerd;
  let api: ApiServerDouble;
  let agent: NodeAgent;
  let c: JoinedNode;

  const kubectl = (...args: string[]) => c.kubectl(...args);
  const apply = (name: string, doc: object) => c.apply(`${name}.json`, doc);
  const apiPod = (name: string) => agent.pods.lifecycle.listPodsForApi().find((p) => p.metadata.name === name);
  const containerId = (name: string, c = "app") =>
    apiPod(name)
      ?.status?.containerStatuses?.find((s) => s.name === c)
      ?.containerID?.replace(/^containerd:\/\//, "");
  async function exec(pod: string, cmd: string): Promise<string> {
    const r = await ctd.cri.execSync(containerId(pod)!, ["sh", "-c", cmd], 10);
    return new TextDecoder().decode(r.stdout);
  }

  beforeAll(async () => {
    c = await joinDouble({ name: "apivol", config: ["syncFrequency: 2s", "nodeStatusUpdateFrequency: 2s"] });
    ({ ctd, api, agent } = c);
    await kubectl("create", "secret", "generic", "app-secret", "--from-literal=username=admin", "--from-literal=password=s3cret");
    await kubectl("create", "configmap", "app-config", "--from-literal=greeting=hello", "--from-literal=LOG_LEVEL=debug", "--from-literal=bad=key=x");
    await kubectl("create", "service", "clusterip", "web-front", "--tcp=80:8080", "--clusterip=10.96.0.42");
  }, 600_000);

  test("kubectl shows the objects as against a real cluster", async () => {
    expect(await kubectl("get", "secret", "app-secret")).toMatch(/^NAME\s+TYPE\s+DATA\s+AGE\napp-secret\s+Opaque\s+2\s+\S+\n$/);
    expect(await kubectl("get", "configmap")).toMatch(/app-config\s+3\s+\S+\n[\s\S]*kube-root-ca\.crt\s+1\s+/);
    expect(await kubectl("get", "serviceaccounts")).toMatch(/^NAME\s+SECRETS\s+AGE\ndefault\s+0\s+/);
  });

  afterAll(async () => {
    await c?.stop();
  }, 120_000);

  const podName = `vols-${NODE}`;

  test("secret, configMap, projected token and kube-api-access files and env are in the container", async () => {
    await apply(podName, {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: podName, namespace: "default" },
      spec: {
        nodeName: NODE,
        terminationGracePeriodSeconds: 1,
        containers: [
          {
            name: "app",
            image: ctd.images.busybox,
            command: ["sh", "-c", "exec sleep 3600"],
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
        ],
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
    });
    const obj = (await api.store.get(`pods/default/${podName}`))!;
    // The double's ServiceAccount admission did what kube-apiserver does.
    expect(obj.spec.serviceAccountName).toBe("default");
    const access = obj.spec.volumes.find((v: any) => v.name.startsWith("kube-api-access-"));
    expect(access.projected.sources.map((s: any) => Object.keys(s)[0])).toEqual(["serviceAccountToken", "configMap", "downwardAPI"]);
    await until("pod Running", () => apiPod(podName)?.status?.phase === "Running", 120_000);

    expect(await exec(podName, "cat /etc/secret/username; echo; cat /etc/secret/password")).toBe("admin\ns3cret");
    expect(await exec(podName, "stat -L -c %a /etc/secret/username")).toBe("400\n");
    expect(await exec(podName, "cat /etc/config/msgs/greeting.txt; stat -L -c %a /etc/config/msgs/greeting.txt")).toBe("hello640\n");
    expect(await exec(podName, "ls /etc/config")).toBe("msgs\n");
    // The volume's directory is 0777 as upstream's wrapped emptyDir: a non-root user reaches the files.
    expect(await exec(podName, "stat -c %a /etc/config")).toBe("777\n");
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
    const claims = api.verifyToken(token)!;
    expect(claims["kubernetes.io"]).toMatchObject({ namespace: "default", serviceaccount: { name: "default" }, pod: { name: podName, uid: obj.metadata.uid } });
    expect(claims.exp - claims.iat).toBe(3607);
    expect(await exec(podName, `cat ${SA_DIR}/ca.crt`)).toBe(api.caPem);
    expect(await exec(podName, `cat ${SA_DIR}/namespace`)).toBe("default");
    const vault = api.verifyToken(await exec(podName, "cat /var/run/vault/token"))!;
    expect(vault.aud).toEqual(["vault"]);
    expect(await exec(podName, "cat /var/run/vault/user")).toBe("admin");
    expect((await exec(podName, `touch ${SA_DIR}/x 2>&1 || echo read-only`)).trim()).toMatch(/read-only/i);

    // On the host: the atomic writer's layout; the secret volume is a tmpfs, the configMap one is not.
    const secretDir = join(ROOT, "pods", obj.metadata.uid, "volumes", "kubernetes.io~secret", "secret");
    expect(readlinkSync(join(secretDir, "..data"))).toMatch(/^\.\.\d{4}_\d\d_\d\d_\d\d_\d\d_\d\d\.\d+$/);
    expect(readlinkSync(join(secretDir, "username"))).toBe("..data/username");
    const mounts = readFileSync("/proc/self/mountinfo", "utf8");
    expect(mounts).toContain(` ${secretDir} `);
    expect(mounts).not.toContain(` ${join(ROOT, "pods", obj.metadata.uid, "volumes", "kubernetes.io~configmap", "config")} `);
  }, 240_000);

  test("an updated secret and configMap reach the files (pod sync, Watch strategy)", async () => {
    await kubectl(
      "create",
      "secret",
      "generic",
      "app-secret",
      "--from-literal=username=root",
      "--from-literal=password=n3w",
      "--dry-run=client",
      "-o",
      "json",
    ).then((j) => apply("secret-v2", JSON.parse(j)));
    await until("secret update in the file", async () => (await exec(podName, "cat /etc/secret/password")) === "n3w", 60_000);
    expect(await exec(podName, "cat /var/run/vault/user")).toBe("root");
    const cm = (await api.store.get("configmaps/default/app-config"))!;
    await api.store.put("configmaps/default/app-config", { ...cm, data: { ...cm.data, greeting: "bonjour" } });
    await until("configMap update in the file", async () => (await exec(podName, "cat /etc/config/msgs/greeting.txt")) === "bonjour", 60_000);
    // env is fixed at container start, as upstream.
    expect(await exec(podName, "echo $DB_USER")).toBe("admin\n");
    expect(apiPod(podName)?.status?.containerStatuses?.[0]?.restartCount).toBe(0);
    // A deleted secret: the mounted volume keeps its last files and the pod keeps running (a refresh
    // failure is a FailedMount warning, not a stop), as upstream's volume manager.
    const secretMountErrors = () =>
      parsePromText(agent.metrics.render())
        .get("storage_operation_errors_total")
        ?.samples.find((x) => x.labels.volume_plugin === "kubernetes.io/secret" && x.labels.operation_name === "volume_mount")?.value ?? 0;
    const errorsBefore = secretMountErrors();
    await kubectl("delete", "secret", "app-secret");
    await until("a failed refresh of the secret volume", () => secretMountErrors() > errorsBefore, 30_000);
    expect(await exec(podName, "cat /etc/secret/password")).toBe("n3w");
    expect(apiPod(podName)?.status?.phase).toBe("Running");
    expect(apiPod(podName)?.status?.containerStatuses?.[0]?.state?.running).toBeDefined();
  }, 180_000);

  test("a missing secret: the pod waits in ContainerCreating with upstream's FailedMount message, then starts", async () => {
    const name = `late-${NODE}`;
    await apply(name, {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name, namespace: "default" },
      spec: {
        nodeName: NODE,
        terminationGracePeriodSeconds: 1,
        automountServiceAccountToken: false,
        containers: [{ name: "app", image: ctd.images.busybox, command: ["sh", "-c", "exec sleep 3600"], volumeMounts: [{ name: "s", mountPath: "/s" }] }],
        volumes: [{ name: "s", secret: { secretName: "later" } }],
      },
    });
    const waiting = await until("ContainerCreating", () => apiPod(name)?.status?.containerStatuses?.[0]?.state?.waiting, 60_000);
    expect(waiting).toEqual({ reason: "ContainerCreating", message: 'MountVolume.SetUp failed for volume "s" : secret "later" not found' });
    expect(apiPod(name)!.status!.phase).toBe("Pending");
    // The FailedMount event, as kubectl describe pod shows it.
    const ev = await until(
      "FailedMount event",
      async () => (await api.store.list("events/default/")).items.find((e) => e.reason === "FailedMount" && e.involvedObject?.name === name),
      30_000,
    );
    expect(ev).toMatchObject({ type: "Warning", message: 'MountVolume.SetUp failed for volume "s" : secret "later" not found' });
    expect((await ctd.cri.listPodSandbox()).filter((s: any) => s.metadata?.name === name)).toEqual([]);
    await kubectl("create", "secret", "generic", "later", "--from-literal=k=v");
    await until("Running once the secret exists", () => apiPod(name)?.status?.phase === "Running", 120_000);
    expect(await exec(name, "cat /s/k")).toBe("v");
  }, 240_000);

  test("a missing configMap key for env: CreateContainerConfigError with upstream's message", async () => {
    const name = `badenv-${NODE}`;
    await apply(name, {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name, namespace: "default" },
      spec: {
        nodeName: NODE,
        terminationGracePeriodSeconds: 1,
        containers: [
          {
            name: "app",
            image: ctd.images.busybox,
            command: ["sh", "-c", "exec sleep 3600"],
            env: [{ name: "X", valueFrom: { configMapKeyRef: { name: "app-config", key: "absent" } } }],
          },
        ],
      },
    });
    const waiting = await until("CreateContainerConfigError", () => apiPod(name)?.status?.containerStatuses?.[0]?.state?.waiting, 120_000);
    expect(waiting).toEqual({ reason: "CreateContainerConfigError", message: "couldn't find key absent in ConfigMap default/app-config" });
  }, 180_000);

  test("the node watches only the objects its pods reference", () => {
    expect(existsSync(ROOT) && lstatSync(ROOT).isDirectory()).toBe(true);
    const watches = api.requests
      .filter((r) => r.user === `system:node:${NODE}` && r.path.includes("watch=true") && /\/(secrets|configmaps)\?/.test(r.path))
      .map((r) => decodeURIComponent(r.path));
    expect(watches.some((p) => p.includes("fieldSelector=metadata.name=app-secret"))).toBe(true);
    expect(watches.every((p) => p.includes("fieldSelector=metadata.name="))).toBe(true);
  });
});
