// machine test: root and a private containerd (test/support/containerd.ts)
// Pod security fields on a real containerd (private instance from test/support): static pod files →
// lifecycle → kuberuntime → containerd, asserting on what reached the runtime — the OCI spec
// containerd holds for each container (ContainerStatus verbose info.runtimeSpec) — and on behaviour:
// runAsNonRoot with a root image, sysctls inside the pod, fsGroup on the emptyDir, admission refusals.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, mkdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createPodCgroupManager } from "../../src/pod/cm/container-manager.ts";
import { createKubeRuntime } from "../../src/pod/kuberuntime/manager.ts";
import { createPodLifecycle } from "../../src/pod/lifecycle.ts";
import type { PodLifecycle } from "../../src/pod/lifecycle-types.ts";
import type { Runtime } from "../../src/pod/runtime.ts";
import { appArmorAdmitHandler, sysctlAdmitHandler } from "../../src/pod/security/index.ts";
import type { PodStatus } from "../../src/pod/types.ts";
import { acquireContainerd, canRunContainerd, removeNodePods, tearDownPods, type TestContainerd, testRuntimeCriName } from "../support/containerd.ts";
import { until } from "../support/wait.ts";

const PID = process.pid;
const CGROUP_ROOT = `/bunlet-sec-${PID}`;
const BASE = `/tmp/bunlet-sec-${PID}`;
const MANIFESTS = join(BASE, "manifests");
const ROOT = join(BASE, "root");
const NODE = "secnode";
const BUSYBOX = "bunlet.local/busybox:1";

type Obj = Record<string, unknown>;
const sleeper = (name: string, securityContext?: Obj, extra: Obj = {}) => ({
  name,
  image: BUSYBOX,
  command: ["sh", "-c", "exec sleep 3600"],
  ...(securityContext ? { securityContext } : {}),
  ...extra,
});
const writePod = (name: string, spec: Obj, annotations?: Obj) =>
  writeFileSync(
    join(MANIFESTS, `${name}.json`),
    JSON.stringify({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name, ...(annotations ? { annotations } : {}) },
      spec: { terminationGracePeriodSeconds: 1, ...spec },
    }),
  );

interface OciSpec {
  process: {
    user: { uid: number; gid: number; additionalGids?: number[] };
    capabilities?: Record<string, string[]>;
    noNewPrivileges?: boolean;
    apparmorProfile?: string;
  };
  root: { readonly?: boolean };
  linux: {
    seccomp?: { defaultAction: string; syscalls?: { names: string[]; action: string }[] };
    namespaces: { type: string; path?: string }[];
    maskedPaths?: string[];
    readonlyPaths?: string[];
    sysctl?: Record<string, string>;
  };
  mounts: { destination: string; source: string }[];
}

describe.skipIf(!canRunContainerd())("pod security on containerd", () => {
  let ctd: TestContainerd;
  let rt: Runtime;
  let lc: PodLifecycle;
  const status = (name: string): PodStatus | undefined => lc.listPodsForApi().find((p) => p.metadata.name === `${name}-${NODE}`)?.status;
  const uidOf = (name: string) => lc.listPodsForApi().find((p) => p.metadata.name === `${name}-${NODE}`)!.metadata.uid;
  const running = (name: string, n = 1) =>
    until(`${name} running`, () => {
      const st = status(name);
      return st?.containerStatuses?.length === n && st.containerStatuses.every((c) => c.state.running) ? st : undefined;
    });
  const containerId = (st: PodStatus, c: string) => st.containerStatuses!.find((x) => x.name === c)!.containerID!.replace(`${testRuntimeCriName}://`, "");
  const ociSpec = async (id: string): Promise<OciSpec> => JSON.parse((await ctd.cri.containerStatus(id, true)).info.info!).runtimeSpec;
  const exec = async (id: string, cmd: string[]) => new TextDecoder().decode((await ctd.cri.execSync(id, cmd, 10)).stdout).trim();

  beforeAll(async () => {
    ctd = await acquireContainerd();
    mkdirSync(MANIFESTS, { recursive: true });
    mkdirSync(join(ROOT, "seccomp", "profiles"), { recursive: true });
    writeFileSync(
      join(ROOT, "seccomp", "profiles", "no-mkdir.json"),
      JSON.stringify({ defaultAction: "SCMP_ACT_ALLOW", syscalls: [{ names: ["mkdir", "mkdirat"], action: "SCMP_ACT_ERRNO" }] }),
    );
    rt = createKubeRuntime({ cri: ctd.cri, podLogsDir: join(BASE, "logs"), rootDir: ROOT });
    lc = createPodLifecycle({
      runtime: rt,
      cgroups: createPodCgroupManager({ cgroupRoot: CGROUP_ROOT, podPidsLimit: 256 }),
      config: { nodeName: NODE, hostIP: "127.0.0.1", staticPodPath: MANIFESTS, fileCheckFrequencyMs: 20_000, syncFrequencyMs: 60_000, errorRetryMs: 1_000 },
      admitHandlers: [sysctlAdmitHandler([]), appArmorAdmitHandler(false)],
    });
    await lc.start();
  }, 600_000);

  afterAll(async () => {
    await lc?.stop();
    await tearDownPods(ctd, () => removeNodePods(rt, NODE), CGROUP_ROOT, BASE);
  }, 120_000);

  test("user, groups, capabilities, read-only rootfs, no_new_privs, RuntimeDefault seccomp, sysctls and fsGroup reach the runtime", async () => {
    writePod("sec", {
      securityContext: {
        runAsUser: 1000,
        runAsGroup: 3000,
        fsGroup: 2000,
        supplementalGroups: [4000],
        seccompProfile: { type: "RuntimeDefault" },
        sysctls: [{ name: "net.ipv4.ping_group_range", value: "0 2000" }],
      },
      volumes: [
        { name: "scratch", emptyDir: {} },
        { name: "info", downwardAPI: { items: [{ path: "name", fieldRef: { fieldPath: "metadata.name" }, mode: 0o600 }] } },
      ],
      containers: [
        sleeper(
          "app",
          { capabilities: { add: ["NET_ADMIN"], drop: ["ALL"] }, readOnlyRootFilesystem: true, allowPrivilegeEscalation: false },
          {
            volumeMounts: [
              { name: "scratch", mountPath: "/scratch" },
              { name: "info", mountPath: "/info" },
            ],
          },
        ),
      ],
    });
    const st = await running("sec");
    const id = containerId(st, "app");
    const spec = await ociSpec(id);
    expect(spec.process.user.uid).toBe(1000);
    expect(spec.process.user.gid).toBe(3000);
    expect(spec.process.user.additionalGids).toEqual(expect.arrayContaining([2000, 4000]));
    expect(spec.process.capabilities!.bounding).toEqual(["CAP_NET_ADMIN"]);
    expect(spec.process.noNewPrivileges).toBe(true);
    expect(spec.root.readonly).toBe(true);
    expect(spec.linux.seccomp?.defaultAction).toBe("SCMP_ACT_ERRNO");
    expect(spec.linux.maskedPaths).toContain("/proc/kcore");
    expect(spec.linux.readonlyPaths).toContain("/proc/sys");
    // In the container: the ids, the sandbox's sysctl, the fsGroup-owned emptyDir it can write.
    expect(await exec(id, ["id", "-u"])).toBe("1000");
    expect((await exec(id, ["id", "-G"])).split(" ")).toEqual(expect.arrayContaining(["3000", "2000", "4000"]));
    expect((await exec(id, ["cat", "/proc/sys/net/ipv4/ping_group_range"])).split(/\s+/)).toEqual(["0", "2000"]);
    expect(await exec(id, ["sh", "-c", "touch /scratch/f && echo ok"])).toBe("ok");
    expect(await exec(id, ["sh", "-c", "touch /rootfs-file 2>/dev/null || echo read-only"])).toBe("read-only");
    const vol = statSync(join(ROOT, "pods", uidOf("sec"), "volumes", "kubernetes.io~empty-dir", "scratch"));
    expect(vol.gid).toBe(2000);
    expect(vol.mode & 0o2070).toBe(0o2070);
    // downwardAPI files: fsGroup-owned, group-readable, so the non-root user reads a 0600 file.
    const info = statSync(join(ROOT, "pods", uidOf("sec"), "volumes", "kubernetes.io~downward-api", "info", "name"));
    expect([info.gid, info.mode & 0o777]).toEqual([2000, 0o640]);
    expect(await exec(id, ["cat", "/info/name"])).toBe(`sec-${NODE}`);
  }, 120_000);

  test("Localhost seccomp from <rootDir>/seccomp, Unconfined, privileged and the AppArmor annotation 'unconfined'", async () => {
    writePod(
      "prof",
      {
        hostNetwork: true,
        containers: [
          sleeper("local", { seccompProfile: { type: "Localhost", localhostProfile: "profiles/no-mkdir.json" } }),
          sleeper("open", { seccompProfile: { type: "Unconfined" } }),
          sleeper("priv", { privileged: true }),
        ],
      },
      { "container.apparmor.security.beta.kubernetes.io/open": "unconfined" },
    );
    const st = await running("prof", 3);
    const local = await ociSpec(containerId(st, "local"));
    expect(local.linux.seccomp).toMatchObject({ defaultAction: "SCMP_ACT_ALLOW", syscalls: [{ names: ["mkdir", "mkdirat"], action: "SCMP_ACT_ERRNO" }] });
    expect(await exec(containerId(st, "local"), ["sh", "-c", "mkdir /tmp/x 2>/dev/null && echo made || echo refused"])).toBe("refused");
    const open = await ociSpec(containerId(st, "open"));
    expect(open.linux.seccomp).toBeUndefined();
    expect(open.process.apparmorProfile ?? "").toBe("");
    const priv = await ociSpec(containerId(st, "priv"));
    expect(priv.process.capabilities!.bounding).toContain("CAP_SYS_ADMIN");
    expect(priv.linux.maskedPaths ?? []).toEqual([]);
  }, 120_000);

  test("runAsNonRoot with a root image: CreateContainerConfigError with upstream's message; a runAsUser makes it run", async () => {
    writePod("nonroot", {
      hostNetwork: true,
      securityContext: { runAsNonRoot: true },
      volumes: [{ name: "scratch", emptyDir: {} }],
      containers: [sleeper("app"), sleeper("ok", { runAsUser: 65534 }, { volumeMounts: [{ name: "scratch", mountPath: "/scratch" }] })],
    });
    const st = await until("nonroot config error", () => {
      const s = status("nonroot");
      const app = s?.containerStatuses?.find((c) => c.name === "app");
      const ok = s?.containerStatuses?.find((c) => c.name === "ok");
      return app?.state.waiting?.reason === "CreateContainerConfigError" && ok?.state.running ? s : undefined;
    });
    const app = st.containerStatuses!.find((c) => c.name === "app")!;
    expect(app.state.waiting!.message).toBe(
      `container has runAsNonRoot and image will run as root (pod: "nonroot-${NODE}_default(${uidOf("nonroot")})", container: app)`,
    );
    const ok = await ociSpec(containerId(st, "ok"));
    expect(ok.process.user.uid).toBe(65534);
    // emptyDir is 0777 as upstream's: a non-root container writes to it without an fsGroup.
    expect(await exec(containerId(st, "ok"), ["sh", "-c", "touch /scratch/f && echo ok"])).toBe("ok");
  }, 120_000);

  test("examples/manifests/hardened.yaml runs as written", async () => {
    copyFileSync(join(import.meta.dir, "../../examples/manifests/hardened.yaml"), join(MANIFESTS, "hardened.yaml"));
    const st = await running("hardened");
    const id = containerId(st, "app");
    const spec = await ociSpec(id);
    expect([spec.process.user.uid, spec.process.noNewPrivileges, spec.root.readonly, spec.process.capabilities!.bounding ?? []]).toEqual([
      65534,
      true,
      true,
      [],
    ]);
    expect(await exec(id, ["cat", "/scratch/started"])).not.toBe("");
    expect(await exec(id, ["grep", "metrics.internal", "/etc/hosts"])).toBe("192.0.2.10\tmetrics.internal");
  }, 120_000);

  test("an unsafe sysctl is refused at admission (SysctlForbidden); AppArmor on a host without it too", async () => {
    writePod("unsafe", { securityContext: { sysctls: [{ name: "kernel.msgmax", value: "65536" }] }, containers: [sleeper("app")] });
    writePod("armored", { hostNetwork: true, containers: [sleeper("app", { appArmorProfile: { type: "RuntimeDefault" } })] });
    const unsafe = await until("unsafe rejected", () => (status("unsafe")?.phase === "Failed" ? status("unsafe") : undefined));
    expect(unsafe).toMatchObject({ reason: "SysctlForbidden", message: 'forbidden sysctl: "kernel.msgmax" not allowlisted' });
    const armored = await until("armored rejected", () => (status("armored")?.phase === "Failed" ? status("armored") : undefined));
    expect(armored).toMatchObject({ reason: "AppArmor", message: "Cannot enforce AppArmor: AppArmor is not enabled on the host" });
  }, 120_000);
});
