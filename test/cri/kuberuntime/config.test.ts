import { describe, expect, test } from "bun:test";
import {
  ContainerConfigError,
  type ConfigInputs,
  expandContainerCommand,
  generateContainerConfig,
  generatePodSandboxConfig,
  idmapMounts,
  podHostname,
} from "../../../src/pod/kuberuntime/config.ts";
import { containerChanged, hashContainer, legacyHashContainer } from "../../../src/pod/kuberuntime/hash.ts";
import { podIdentityFromLabels } from "../../../src/pod/kuberuntime/labels.ts";
import type { KubeContainer, KubePod } from "../../../src/pod/kuberuntime/types.ts";

const ref = { name: "web", namespace: "prod", uid: "1234" };
const inputs: ConfigInputs = {
  podLogsDir: "/var/log/pods",
  cgroupParent: "/kubepods/burstable/pod1234",
  memoryCapacityBytes: 4 * 1024 ** 3,
  volumeHostPath: (_ref, name) => ({ data: "/srv/data", scratch: "/var/lib/kubelet/pods/1234/volumes/kubernetes.io~empty-dir/scratch" })[name],
};

const app: KubeContainer = {
  name: "app",
  image: "bunlet.local/busybox:1",
  command: ["sh", "-c", "echo $(GREETING) $(MISSING) $$(GREETING)"],
  args: ["$(GREETING)"],
  env: [{ name: "GREETING", value: "hi" }],
  volumeMounts: [
    { name: "data", mountPath: "/data", readOnly: true, subPath: "sub" },
    { name: "scratch", mountPath: "/scratch" },
  ],
  securityContext: { runAsUser: 1000, allowPrivilegeEscalation: false },
};

function pod(extra: Partial<KubePod["spec"]> = {}): KubePod {
  return {
    metadata: { name: "web", namespace: "prod", uid: "1234", labels: { app: "web" }, annotations: { note: "x" } },
    spec: { containers: [app], terminationGracePeriodSeconds: 30, ...extra },
  };
}

describe("generatePodSandboxConfig", () => {
  test("pod network: hostname, log directory, labels, cgroup parent, namespaces", () => {
    const c = generatePodSandboxConfig(pod(), ref, 1, inputs);
    expect(c.metadata).toEqual({ name: "web", namespace: "prod", uid: "1234", attempt: 1 });
    expect(c.hostname).toBe("web");
    expect(c.logDirectory).toBe("/var/log/pods/prod_web_1234");
    expect(c.labels).toEqual({ app: "web", "io.kubernetes.pod.name": "web", "io.kubernetes.pod.namespace": "prod", "io.kubernetes.pod.uid": "1234" });
    expect(c.annotations).toEqual({ note: "x" });
    expect(c.linux?.cgroupParent).toBe("/kubepods/burstable/pod1234");
    expect(c.linux?.securityContext?.namespaceOptions).toEqual({ network: "POD", pid: "CONTAINER", ipc: "POD" });
    expect(podIdentityFromLabels(c.labels ?? {})).toEqual(ref);
  });

  test("host network: no hostname (runc cannot set it in the host UTS namespace), NODE network", () => {
    const c = generatePodSandboxConfig(pod({ hostNetwork: true }), ref, 0, inputs);
    expect(c.hostname).toBe("");
    expect(c.linux?.securityContext?.namespaceOptions?.network).toBe("NODE");
  });

  test("host ports become port mappings", () => {
    const withPort: KubeContainer = { ...app, ports: [{ containerPort: 80, hostPort: 8080 }, { containerPort: 81 }] };
    const c = generatePodSandboxConfig(pod({ containers: [withPort] }), ref, 0, inputs);
    expect(c.portMappings).toEqual([{ protocol: "TCP", containerPort: 80, hostPort: 8080, hostIp: "" }]);
  });

  test("a long pod name is cut to a 63-character hostname", () => {
    const long = pod();
    long.metadata.name = `${"a".repeat(62)}-b`;
    expect(podHostname(long)).toBe("a".repeat(62));
  });
});

describe("generateContainerConfig", () => {
  const c = generateContainerConfig(pod(), ref, app, 2, inputs);

  test("metadata, image and log path <name>/<attempt>.log", () => {
    expect(c.metadata).toEqual({ name: "app", attempt: 2 });
    expect(c.image.image).toBe("bunlet.local/busybox:1");
    expect(c.logPath).toBe("app/2.log");
  });

  // upstream generateContainerConfig: what `kubectl run -it` asks for reaches the runtime.
  test.each([
    ["kubectl run -it", { stdin: true, stdinOnce: true, tty: true }, { stdin: true, stdinOnce: true, tty: true }],
    ["stdin kept open", { stdin: true }, { stdin: true, stdinOnce: false, tty: false }],
    ["none", {}, { stdin: false, stdinOnce: false, tty: false }],
  ])("stdin, stdinOnce and tty: %s", (_n, fields, want) => {
    expect(generateContainerConfig(pod(), ref, { ...app, ...fields }, 0, inputs)).toMatchObject(want);
  });

  test("env and $(VAR) expansion in command and args", () => {
    expect(c.envs).toEqual([{ key: "GREETING", value: "hi" }]);
    expect(c.command).toEqual(["sh", "-c", "echo hi $(MISSING) $(GREETING)"]);
    expect(c.args).toEqual(["hi"]);
  });

  test("volume mounts from the resolved host paths, with subPath and readOnly", () => {
    expect(c.mounts).toEqual([
      { containerPath: "/data", hostPath: "/srv/data/sub", readonly: true },
      { containerPath: "/scratch", hostPath: "/var/lib/kubelet/pods/1234/volumes/kubernetes.io~empty-dir/scratch", readonly: false },
    ]);
  });

  test("labels identify, annotations carry hash, restart count and grace period", () => {
    expect(c.labels?.["io.kubernetes.container.name"]).toBe("app");
    expect(c.labels?.["io.kubernetes.pod.uid"]).toBe("1234");
    expect(c.annotations?.["io.kubernetes.container.hash"]).toBe(hashContainer(app));
    expect(c.annotations?.["io.kubernetes.container.restartCount"]).toBe("2");
    expect(c.annotations?.["io.kubernetes.pod.terminationGracePeriod"]).toBe("30");
  });

  test("security context: user, no-new-privs", () => {
    expect(c.linux?.securityContext?.runAsUser).toEqual({ value: 1000 });
    expect(c.linux?.securityContext?.noNewPrivs).toBe(true);
    expect(c.linux?.securityContext?.privileged).toBe(false);
  });

  test("an unknown volume fails naming container and volume", () => {
    const bad: KubeContainer = { name: "bad", image: "x", volumeMounts: [{ name: "nope", mountPath: "/n" }] };
    expect(() => generateContainerConfig(pod(), ref, bad, 0, inputs)).toThrow(ContainerConfigError);
    expect(() => generateContainerConfig(pod(), ref, bad, 0, inputs)).toThrow('container "bad": volumeMounts name "nope"');
  });
});

describe("expandContainerCommand", () => {
  test.each([
    ["$(A)", "1"],
    ["x$(A)y$(B)", "x1y2"],
    ["$(C)", "$(C)"],
    ["$$(A)", "$(A)"],
    ["$A", "$A"],
  ])("%s → %s", (input, want) => expect(expandContainerCommand(input, { A: "1", B: "2" })).toBe(want));
});

describe("hashContainer", () => {
  test("is stable under key order and changes with the spec", () => {
    expect(hashContainer({ name: "a", image: "x" })).toBe(hashContainer({ image: "x", name: "a" }));
    expect(hashContainer({ name: "a", image: "x" })).not.toBe(hashContainer({ name: "a", image: "y" }));
    expect(hashContainer({ name: "a" })).toMatch(/^[0-9a-f]{1,8}$/);
  });
  // Values printed by upstream's HashContainer (v1.37.2) for the same name and image.
  test.each([
    ["app", "busybox", "3ada567e"],
    ["c", "registry.k8s.io/pause:3.10", "c66cfb5f"],
    ["long-name-container", "docker.io/library/nginx:1.27-alpine", "925351fe"],
  ])("%s %s → %s, as upstream's", (name, image, want) => expect(hashContainer({ name, image })).toBe(want));
  test("resources, resizePolicy, env and command are not hashed", () => {
    const base = { name: "app", image: "busybox" };
    const resized = { ...base, resources: { limits: { memory: "64Mi" } }, resizePolicy: [], env: [{ name: "A", value: "1" }], command: ["sh"] };
    expect(hashContainer(resized)).toBe(hashContainer(base));
  });
  test("containerChanged: a new image changes it; the spec's own and the legacy whole-spec hash do not", () => {
    const c = { name: "app", image: "busybox", resources: { limits: { cpu: "1" } } };
    expect(containerChanged(c, hashContainer(c))).toBe(false);
    expect(containerChanged(c, legacyHashContainer(c))).toBe(false);
    expect(containerChanged(c, undefined)).toBe(false);
    expect(containerChanged({ ...c, image: "busybox:1.37" }, hashContainer(c))).toBe(true);
    const resized = { ...c, resources: { limits: { cpu: "2" } } };
    expect(containerChanged(resized, legacyHashContainer(c))).toBe(true);
  });
});

describe("generateContainerConfig: downward API env, sub paths, propagation, preStop annotation", () => {
  const c: KubeContainer = {
    name: "app",
    image: "x",
    env: [
      { name: "POD", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } },
      { name: "IP", valueFrom: { fieldRef: { fieldPath: "status.podIP" } } },
      { name: "MEM", valueFrom: { resourceFieldRef: { resource: "limits.memory", divisor: "1Mi" } } },
    ],
    resources: { limits: { memory: "64Mi" } },
    volumeMounts: [
      { name: "data", mountPath: "/a", subPathExpr: "logs/$(POD)", mountPropagation: "HostToContainer" },
      { name: "data", mountPath: "/b", mountPropagation: "None" },
      { name: "scratch", mountPath: "/c", subPath: "../x" },
    ],
    lifecycle: { preStop: { sleep: { seconds: 3 } } },
  };
  const withDownward: ConfigInputs = {
    ...inputs,
    downward: { podIP: "10.0.0.9", hostIP: "1.1.1.1", nodeAllocatable: { cpuMilli: 2000, memoryBytes: 2 ** 30 } },
  };

  test("env values, propagation and the preStop annotation reach the CRI config; an escaping subPath is a config error", () => {
    expect(() => generateContainerConfig(pod({ containers: [c] }), ref, c, 0, withDownward)).toThrow(
      "unable to provision SubPath `../x`: must not contain '..'",
    );
    const ok = { ...c, volumeMounts: c.volumeMounts!.slice(0, 2) };
    const cfg = generateContainerConfig(pod({ containers: [ok] }), ref, ok, 0, withDownward);
    expect(cfg.envs).toEqual([
      { key: "POD", value: "web" },
      { key: "IP", value: "10.0.0.9" },
      { key: "MEM", value: "64" },
    ]);
    expect(cfg.mounts).toEqual([
      { containerPath: "/a", hostPath: "/srv/data/logs/web", readonly: false, propagation: "PROPAGATION_HOST_TO_CONTAINER" },
      { containerPath: "/b", hostPath: "/srv/data", readonly: false, propagation: "PROPAGATION_PRIVATE" },
    ]);
    expect(JSON.parse(cfg.annotations!["io.kubernetes.container.preStopHandler"]!)).toEqual({ sleep: { seconds: 3 } });
  });
});

describe("cpusetCpus from the CPU manager", () => {
  test("the container's CPUs when it gives them, nothing otherwise", () => {
    const withCpus = generateContainerConfig(pod(), ref, app, 0, { ...inputs, cpuAffinity: (name) => (name === "app" ? "1" : "") });
    expect(withCpus.linux?.resources?.cpusetCpus).toBe("1");
    const without = generateContainerConfig(pod(), ref, app, 0, { ...inputs, cpuAffinity: () => "" });
    expect(without.linux?.resources?.cpusetCpus).toBeUndefined();
  });
});

describe("user namespace (hostUsers: false)", () => {
  const mapping = { hostId: 196608, containerId: 0, length: 65536 };
  const userns = { mode: "POD" as const, uids: [mapping], gids: [mapping] };

  test("the sandbox and the containers get the pod's user namespace beside their other namespaces", () => {
    const p = pod({ hostUsers: false });
    const sandbox = generatePodSandboxConfig(p, ref, 0, { ...inputs, usernsOptions: userns });
    expect(sandbox.linux?.securityContext?.namespaceOptions).toEqual({ network: "POD", pid: "CONTAINER", ipc: "POD", usernsOptions: userns });
    const c = generateContainerConfig(p, ref, app, 0, { ...inputs, usernsOptions: userns });
    expect(c.linux?.securityContext?.namespaceOptions?.usernsOptions).toEqual(userns);
  });

  test("mode POD: every mount idmapped with the pod's mappings; mode NODE or none: mounts untouched", () => {
    const c = generateContainerConfig(pod(), ref, app, 0, inputs);
    expect(idmapMounts(c, userns).mounts?.map((m) => [m.containerPath, m.uidMappings, m.gidMappings])).toEqual([
      ["/data", [mapping], [mapping]],
      ["/scratch", [mapping], [mapping]],
    ]);
    expect(idmapMounts(c, { mode: "NODE" })).toBe(c);
    expect(idmapMounts(c, undefined)).toBe(c);
    expect(c.mounts?.[0]).not.toHaveProperty("uidMappings");
  });

  test("mode NODE is sent as such; without a manager no user namespace is sent", () => {
    const node = generatePodSandboxConfig(pod(), ref, 0, { ...inputs, usernsOptions: { mode: "NODE" } });
    expect(node.linux?.securityContext?.namespaceOptions?.usernsOptions).toEqual({ mode: "NODE" });
    expect(generatePodSandboxConfig(pod(), ref, 0, inputs).linux?.securityContext?.namespaceOptions).not.toHaveProperty("usernsOptions");
  });
});

describe("raw block volumes (upstream makeBlockVolumes, makeDevices)", () => {
  const link = "/var/lib/kubelet/pods/1234/volumeDevices/kubernetes.io~local-volume/pv-blk";
  const blockInputs = (readOnly: boolean): ConfigInputs => ({
    ...inputs,
    volumeHostPath: (_ref, name) => (name === "blk" ? link : undefined),
    readOnlyVolume: () => readOnly,
  });
  const withDevices = (devices: { name: string; devicePath: string }[]): KubeContainer => ({ name: "app", image: "x", volumeDevices: devices });

  test("each volumeDevices entry a CRI device from the volume's link, mrw; r for a read-only claim", () => {
    const c = withDevices([{ name: "blk", devicePath: "/dev/xvda" }]);
    expect(generateContainerConfig(pod({ containers: [c] }), ref, c, 0, blockInputs(false)).devices).toEqual([
      { containerPath: "/dev/xvda", hostPath: link, permissions: "mrw" },
    ]);
    expect(generateContainerConfig(pod({ containers: [c] }), ref, c, 0, blockInputs(true)).devices).toEqual([
      { containerPath: "/dev/xvda", hostPath: link, permissions: "r" },
    ]);
    const none: KubeContainer = { name: "app", image: "x" };
    expect(generateContainerConfig(pod({ containers: [none] }), ref, none, 0, blockInputs(false))).not.toHaveProperty("devices");
  });
  test.each([
    [[{ name: "blk", devicePath: "dev/xvda" }], "error DevicePath `dev/xvda` must be an absolute path"],
    [[{ name: "other", devicePath: "/dev/xvdb" }], 'cannot find volume "other" to pass into container "app"'],
  ])("%j: a config error", (devices, want) => {
    const c = withDevices(devices);
    expect(() => generateContainerConfig(pod({ containers: [c] }), ref, c, 0, blockInputs(false))).toThrow(new ContainerConfigError("app", want));
  });
});
