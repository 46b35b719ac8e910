import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError } from "../../src/config/errors.ts";
import { defaultKubeletConfiguration } from "../../src/config/defaults.ts";
import { loadConfig } from "../../src/config/load.ts";

const FIXTURE = join(import.meta.dir, "fixtures", "kubeadm-config.yaml");
const HEAD = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n";
let dir = "";
let n = 0;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), `bunlet-config-${process.pid}-`));
});
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Writes a config file (YAML body after apiVersion/kind unless `raw`) and returns its path. */
function file(body: string, opts: { raw?: boolean; ext?: string } = {}): string {
  const p = join(dir, `config-${++n}.${opts.ext ?? "yaml"}`);
  writeFileSync(p, opts.raw ? body : HEAD + body);
  return p;
}

async function loadError(argv: string[]): Promise<ConfigError> {
  try {
    await loadConfig(argv);
  } catch (e) {
    if (e instanceof ConfigError) return e;
    throw e;
  }
  throw new Error(`loadConfig(${JSON.stringify(argv)}) succeeded; expected a ConfigError`);
}

describe("defaults", () => {
  test("no flags, no file: upstream v1beta1 defaults", async () => {
    const l = await loadConfig([]);
    expect(l.config).toEqual(defaultKubeletConfiguration());
    expect(l.warnings).toEqual([]);
    expect(l.configFile).toBeUndefined();
    expect(l.flags).toMatchObject({ rootDir: "/var/lib/kubelet", exitOnLockContention: false, nodeLabels: {}, v: 0, registerNode: true });
  });

  test.each([
    ["syncFrequency", "1m0s"],
    ["fileCheckFrequency", "20s"],
    ["httpCheckFrequency", "20s"],
    ["address", "0.0.0.0"],
    ["port", 10250],
    ["readOnlyPort", 0],
    ["healthzPort", 10248],
    ["healthzBindAddress", "127.0.0.1"],
    ["nodeStatusUpdateFrequency", "10s"],
    ["nodeStatusReportFrequency", "5m0s"],
    ["nodeLeaseDurationSeconds", 40],
    ["imageGCHighThresholdPercent", 85],
    ["imageGCLowThresholdPercent", 80],
    ["imageMinimumGCAge", "2m0s"],
    ["cgroupsPerQOS", true],
    ["cgroupDriver", "cgroupfs"],
    ["enforceNodeAllocatable", ["pods"]],
    ["maxPods", 110],
    ["podPidsLimit", -1],
    ["containerRuntimeEndpoint", "unix:///run/containerd/containerd.sock"],
    [
      "evictionHard",
      { "memory.available": "100Mi", "nodefs.available": "10%", "nodefs.inodesFree": "5%", "imagefs.available": "15%", "imagefs.inodesFree": "5%" },
    ],
    ["evictionPressureTransitionPeriod", "5m0s"],
    ["evictionMaxPodGracePeriod", 0],
    ["mergeDefaultEvictionSettings", false],
    ["kernelMemcgNotification", false],
    ["failSwapOn", true],
    ["shutdownGracePeriod", "0s"],
    ["containerLogMaxSize", "10Mi"],
    ["containerLogMaxFiles", 5],
    ["registerNode", true],
    ["featureGates", {}],
    ["evictStaticPods", false],
  ])("%s defaults to %p", async (field, want) => {
    const { config } = await loadConfig([]);
    expect((config as unknown as Record<string, unknown>)[field]).toEqual(want);
  });
});

describe("precedence: defaults < config file < flags", () => {
  type Row = [string, string, string[], string, unknown];
  test.each<Row>([
    ["default only", "", [], "port", 10250],
    ["file wins over default", "port: 11250\n", [], "port", 11250],
    ["flag wins over file", "port: 11250\n", ["--port=12250"], "port", 12250],
    ["flag wins over default", "", ["--max-pods", "20"], "maxPods", 20],
    ["durations are canonicalised", "syncFrequency: 30s\n", ["--sync-frequency=90s"], "syncFrequency", "1m30s"],
    ["file duration canonicalised", "fileCheckFrequency: 60s\n", [], "fileCheckFrequency", "1m0s"],
    ["0s in a file means default", "evictionPressureTransitionPeriod: 0s\n", [], "evictionPressureTransitionPeriod", "5m0s"],
    ["0s by flag stays 0s", "", ["--eviction-pressure-transition-period=0s"], "evictionPressureTransitionPeriod", "0s"],
    ["explicit update frequency becomes the report frequency", "nodeStatusUpdateFrequency: 20s\n", [], "nodeStatusReportFrequency", "20s"],
    ["file evictionHard drops every default", "evictionHard:\n  memory.available: 200Mi\n", [], "evictionHard", { "memory.available": "200Mi" }],
    ["flag evictionHard drops every default", "", ["--eviction-hard=memory.available<300Mi"], "evictionHard", { "memory.available": "300Mi" }],
    [
      "flag map replaces the file's whole map",
      "evictionHard:\n  memory.available: 200Mi\n  nodefs.available: 5%\n",
      ["--eviction-hard=memory.available<300Mi"],
      "evictionHard",
      { "memory.available": "300Mi" },
    ],
    ["repeated map flags merge", "", ["--system-reserved=cpu=100m", "--system-reserved=memory=1Gi"], "systemReserved", { cpu: "100m", memory: "1Gi" }],
    ["reserved map flag replaces the file's", "kubeReserved:\n  cpu: 100m\n  memory: 1Gi\n", ["--kube-reserved=memory=2Gi"], "kubeReserved", { memory: "2Gi" }],
    [
      "feature gates merge over the file's",
      "featureGates:\n  A: true\n  B: true\n",
      ["--feature-gates=B=false,C=true"],
      "featureGates",
      { A: true, B: false, C: true },
    ],
    ["list flag replaces the file's list", "enforceNodeAllocatable: [pods]\n", ["--enforce-node-allocatable=none"], "enforceNodeAllocatable", ["none"]],
    ["empty list in a file is kept (not defaulted)", "enforceNodeAllocatable: []\n", [], "enforceNodeAllocatable", []],
    [
      "soft maps",
      "",
      ["--eviction-soft=memory.available<1Gi", "--eviction-soft-grace-period=memory.available=1m30s"],
      "evictionSoftGracePeriod",
      { "memory.available": "1m30s" },
    ],
    [
      "manifest headers accumulate over uses",
      "",
      ["--manifest-url-header=a:1", "--manifest-url-header=a:2,b:3"],
      "staticPodURLHeader",
      { a: ["1", "2"], b: ["3"] },
    ],
    ["bunlet's evictStaticPods from the file", "evictStaticPods: true\n", [], "evictStaticPods", true],
    ["bunlet's --evict-static-pods", "evictStaticPods: false\n", ["--evict-static-pods"], "evictStaticPods", true],
    [
      "nested field by flag",
      "authentication:\n  anonymous:\n    enabled: true\n",
      ["--authentication-token-webhook=false"],
      "authentication",
      { x509: {}, webhook: { enabled: false, cacheTTL: "2m0s" }, anonymous: { enabled: true } },
    ],
    ["yaml 1.1 booleans as the kubelet reads them", "failSwapOn: no\n", [], "failSwapOn", false],
    [
      "-v sets logging.verbosity",
      "",
      ["-v=4"],
      "logging",
      { format: "text", flushFrequency: "5s", verbosity: 4, options: { text: { infoBufferSize: "0" }, json: { infoBufferSize: "0" } } },
    ],
  ])("%s", async (_name, body, flags, field, want) => {
    const argv = body === "" ? flags : ["--config", file(body), ...flags];
    const { config } = await loadConfig(argv);
    expect((config as unknown as Record<string, unknown>)[field]).toEqual(want);
  });

  test("flag-only settings land in NodeFlags", async () => {
    const { flags } = await loadConfig([
      "--kubeconfig=/etc/kubernetes/kubelet.conf",
      "--hostname-override=node-a",
      "--node-ip=10.0.0.5",
      "--root-dir=/srv/kubelet",
      "--lock-file=/run/kubelet.lock",
      "--exit-on-lock-contention",
      "--node-labels=a=1,b=2",
      "--node-labels=c=3",
      "--v=3",
      "--register-node=false",
      "--eviction-trace=/tmp/trace.jsonl",
    ]);
    expect(flags).toMatchObject({
      kubeconfig: "/etc/kubernetes/kubelet.conf",
      hostnameOverride: "node-a",
      nodeIP: "10.0.0.5",
      rootDir: "/srv/kubelet",
      lockFile: "/run/kubelet.lock",
      exitOnLockContention: true,
      nodeLabels: { a: "1", b: "2", c: "3" },
      v: 3,
      registerNode: false,
      evictionTrace: "/tmp/trace.jsonl",
    });
  });

  test("logging.verbosity in the file sets -v when no flag does", async () => {
    const { flags } = await loadConfig(["--config", file("logging:\n  verbosity: 2\n")]);
    expect(flags.v).toBe(2);
  });

  test("relative paths in the file are relative to the file", async () => {
    const p = file("staticPodPath: manifests\ntlsCertFile: pki/kubelet.crt\n");
    const { config, configFile } = await loadConfig(["--config", p]);
    expect(configFile).toBe(p);
    expect(config.staticPodPath).toBe(join(dir, "manifests"));
    expect(config.tlsCertFile).toBe(join(dir, "pki/kubelet.crt"));
  });

  test("mergeDefaultEvictionSettings is passed through with the user's map", async () => {
    const { config } = await loadConfig(["--config", file("mergeDefaultEvictionSettings: true\nevictionHard:\n  memory.available: 1Gi\n")]);
    expect(config.mergeDefaultEvictionSettings).toBe(true);
    expect(config.evictionHard).toEqual({ "memory.available": "1Gi" });
  });

  test("a JSON config file loads too", async () => {
    const p = file(
      JSON.stringify({ apiVersion: "kubelet.config.k8s.io/v1beta1", kind: "KubeletConfiguration", port: 10350, evictionHard: { "memory.available": "1Gi" } }),
      { raw: true, ext: "json" },
    );
    const { config } = await loadConfig([`--config=${p}`]);
    expect(config.port).toBe(10350);
    expect(config.evictionHard).toEqual({ "memory.available": "1Gi" });
  });
});

describe("--config-dir drop-ins", () => {
  test("*.conf files apply in lexical order as merge patches over the file, flags still win", async () => {
    const d = join(dir, `dropins-${++n}`);
    mkdirSync(join(d, "30-nested"), { recursive: true });
    writeFileSync(join(d, "20-b.conf"), `${HEAD}port: 12000\nsyncFrequency: 30s\nsystemReserved:\n  cpu: 200m\n`);
    writeFileSync(join(d, "10-a.conf"), `${HEAD}port: 11000\nmaxPods: 50\nevictionHard:\n  memory.available: 1Gi\nsystemReserved:\n  memory: 1Gi\n`);
    writeFileSync(join(d, "30-nested", "x.conf"), `${HEAD}maxPods: 60\n`);
    writeFileSync(join(d, "99-ignored.yaml"), `${HEAD}maxPods: 99\n`);
    const base = file("port: 10350\nclusterDomain: cluster.local\n");
    const l = await loadConfig(["--config", base, "--config-dir", d, "--max-pods=70"]);
    expect(l.config.port).toBe(12000);
    expect(l.config.syncFrequency).toBe("30s");
    expect(l.config.maxPods).toBe(70);
    expect(l.config.systemReserved).toEqual({ memory: "1Gi", cpu: "200m" });
    expect(l.config.clusterDomain).toBe("cluster.local");
    // Merge-patch over the defaulted config: the default thresholds stay, memory is overridden.
    expect(l.config.evictionHard).toEqual({
      "memory.available": "1Gi",
      "nodefs.available": "10%",
      "nodefs.inodesFree": "5%",
      "imagefs.available": "15%",
      "imagefs.inodesFree": "5%",
    });
    expect(l.sources.port).toBe(join(d, "20-b.conf"));
  });

  test("drop-ins are type-checked like the config file", async () => {
    const d = join(dir, `dropins-${++n}`);
    mkdirSync(d);
    writeFileSync(join(d, "10-bad.conf"), `${HEAD}port: ten\n`);
    const err = await loadError(["--config-dir", d]);
    expect(err.message).toContain(join(d, "10-bad.conf"));
    expect(err.message).toContain("field port");
  });

  test("a missing drop-in directory is an error naming it", async () => {
    const err = await loadError(["--config-dir", join(dir, "no-such-dir")]);
    expect(err.message).toContain("--config-dir");
    expect(err.message).toContain("no-such-dir");
  });
});

describe("kubeadm-written config", () => {
  test("loads unchanged, one warning per setting bunlet does not act on", async () => {
    const l = await loadConfig(["--config", FIXTURE]);
    expect(l.config.staticPodPath).toBe("/etc/kubernetes/manifests");
    expect(l.config.cgroupDriver).toBe("systemd");
    expect(l.config.syncFrequency).toBe("1m0s"); // kubeadm writes 0s: the default applies
    expect(l.config.containerRuntimeEndpoint).toBe("unix:///run/containerd/containerd.sock"); // "" → default
    expect(l.config.clusterDNS).toEqual(["10.96.0.10"]);
    expect(l.config.authentication.x509.clientCAFile).toBe("/etc/kubernetes/pki/ca.crt");
    expect(l.config.logging.flushFrequency).toBe("5s");
    const named = l.warnings.map((w) => w.split(" ")[0]).sort();
    expect(named).toEqual([]); // clusterDNS, clusterDomain, resolvConf: acted on (pod DNS)
    for (const w of l.warnings) expect(w).toContain(FIXTURE);
  });

  test("kubeadm's flags (kubeadm-flags.env, 10-kubeadm.conf) are accepted", async () => {
    const l = await loadConfig([
      "--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf",
      "--kubeconfig=/etc/kubernetes/kubelet.conf",
      `--config=${FIXTURE}`,
      "--container-runtime-endpoint=unix:///var/run/containerd/containerd.sock",
      "--pod-infra-container-image=registry.k8s.io/pause:3.10",
    ]);
    expect(l.config.containerRuntimeEndpoint).toBe("unix:///var/run/containerd/containerd.sock");
    expect(l.flags.podInfraContainerImage).toBe("registry.k8s.io/pause:3.10");
    expect(l.warnings.some((w) => w.startsWith("Flag --pod-infra-container-image has been deprecated"))).toBe(true);
  });

  test("a not-acted-on flag warns once, naming the field", async () => {
    const l = await loadConfig(["--config", FIXTURE, "--hairpin-mode=none", "--max-open-files=100"]);
    expect(l.warnings.filter((w) => w.startsWith("hairpinMode "))).toHaveLength(1);
    expect(l.warnings.some((w) => w.startsWith("maxOpenFiles ") && w.includes("--max-open-files"))).toBe(true);
  });

  test("a flag is acted on exactly when its config field is", async () => {
    const l = await loadConfig(["--oom-score-adj=-500", "--runtime-request-timeout=1m", "--node-status-update-frequency=20s", "--hairpin-mode=none"]);
    const about = (field: string) => l.warnings.filter((w) => w.startsWith(`${field} `));
    expect(about("oomScoreAdj")).toEqual([]);
    expect(about("runtimeRequestTimeout")).toEqual([]);
    expect(about("nodeStatusUpdateFrequency")).toEqual([]);
    expect(about("hairpinMode")).toHaveLength(1);
  });

  test("acted-on settings give no warning", async () => {
    const l = await loadConfig(["--config", file("evictStaticPods: true\nport: 10250\nevictionHard:\n  memory.available: 1Gi\n"), "--max-pods=10"]);
    expect(l.warnings.filter((w) => !w.startsWith("Flag --"))).toEqual([]);
  });
});

describe("lenient decoding", () => {
  test("unknown fields: strict decoding fails, lenient succeeds with a warning naming them", async () => {
    const p = file("port: 10251\nfooBar: 1\nauthentication:\n  anonymous:\n    enabled: false\n  bogus: true\n");
    const l = await loadConfig(["--config", p]);
    expect(l.config.port).toBe(10251);
    const w = l.warnings.find((x) => x.includes("strict decoding"));
    expect(w).toContain('unknown field "fooBar"');
    expect(w).toContain('unknown field "authentication.bogus"');
    expect(w).toContain(p);
  });

  test("duplicate keys: warning, last value wins", async () => {
    const l = await loadConfig(["--config", file("port: 10251\nport: 10252\n")]);
    expect(l.config.port).toBe(10252);
    expect(l.warnings.some((w) => w.includes("strict decoding") && w.includes("line 4"))).toBe(true);
  });
});

describe("file errors name the file, the field, the value and what is valid", () => {
  test.each([
    ['port: "10250"\n', "port", '"10250"', "integer"],
    ["port: 3000000000\n", "port", "3000000000", "int32"],
    ["maxPods: 1.5\n", "maxPods", "1.5", "integer"],
    ["syncFrequency: 10\n", "syncFrequency", "10", "duration"],
    ['syncFrequency: "10"\n', "syncFrequency", '"10"', 'missing unit in duration "10"'],
    ["failSwapOn: maybe\n", "failSwapOn", '"maybe"', "boolean"],
    ["evictionHard: [a]\n", "evictionHard", '["a"]', "map of string to string"],
    ["evictionHard:\n  memory.available: 100\n", 'evictionHard["memory.available"]', "100", "string"],
    ["featureGates:\n  A: sure\n", "featureGates.A", '"sure"', "must be a boolean (true or false)"],
    ["authentication:\n  webhook:\n    cacheTTL: 5\n", "authentication.webhook.cacheTTL", "5", "duration"],
    ["registerWithTaints:\n- key: a\n", "registerWithTaints[0].effect", "<unset>", "string"],
    ["staticPodPath: 7\n", "staticPodPath", "7", "string"],
  ])("%p", async (body, field, value, valid) => {
    const p = file(body);
    const err = await loadError(["--config", p]);
    expect(err.message).toContain(p);
    expect(err.message).toContain(`field ${field}`);
    expect(err.message).toContain(`invalid value ${value}`);
    expect(err.message).toContain(valid);
    expect(err.message).toMatch(/\(line \d+\)|<unset>/);
    expect(err.field).toBe(field);
  });

  test.each([
    ["kind: KubeletConfiguration\nport: 1\n", "Object 'apiVersion' is missing", "apiVersion"],
    ["apiVersion: kubelet.config.k8s.io/v1beta1\nport: 1\n", "Object 'Kind' is missing", "kind"],
    ["apiVersion: kubelet.config.k8s.io/v1alpha1\nkind: KubeletConfiguration\n", '"kubelet.config.k8s.io/v1alpha1"', "apiVersion"],
    ["apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeProxyConfiguration\n", '"KubeProxyConfiguration"', "kind"],
  ])("apiVersion/kind: %p", async (body, message, field) => {
    const p = file(body, { raw: true });
    const err = await loadError(["--config", p]);
    expect(err.message).toContain(p);
    expect(err.message).toContain(message);
    expect(err.message).toContain("kubelet.config.k8s.io/v1beta1");
    expect(err.field).toBe(field);
  });

  test("YAML syntax errors name the file and the line", async () => {
    const p = file("port: 1\nevictionHard:\n  memory.available: [\n");
    const err = await loadError(["--config", p]);
    expect(err.message).toContain(p);
    expect(err.message).toMatch(/yaml: line \d+/);
  });

  test("a missing file names the path", async () => {
    const err = await loadError(["--config", join(dir, "nope.yaml")]);
    expect(err.message).toContain(join(dir, "nope.yaml"));
    expect(err.message).toContain("no such file or directory");
  });

  test("an empty file is an error", async () => {
    const err = await loadError(["--config", file("", { raw: true })]);
    expect(err.message).toContain("file was empty");
  });
});

describe("validation errors name their field, value and source", () => {
  test.each([
    [["--port=0"], "port (--port) 0 must be between 1 and 65535", "--port"],
    [["--read-only-port=70000"], "readOnlyPort (--read-only-port) 70000", "--read-only-port"],
    [["--healthz-port=70000"], "healthzPort (--healthz-port) 70000", "--healthz-port"],
    [["--image-gc-high-threshold=101"], "imageGCHighThresholdPercent (--image-gc-high-threshold) 101 must be between 0 and 100", "--image-gc-high-threshold"],
    [
      ["--image-gc-low-threshold=90"],
      "imageGCLowThresholdPercent (--image-gc-low-threshold) 90 must be less than imageGCHighThresholdPercent (--image-gc-high-threshold) 85",
      "--image-gc-low-threshold",
    ],
    [["--max-pods=-1"], "maxPods (--max-pods) -1 must not be a negative number", "--max-pods"],
    [["--cgroup-driver=foo"], 'cgroupDriver (--cgroup-driver) "foo" must be one of: "cgroupfs", "systemd"', "--cgroup-driver"],
    [["--enforce-node-allocatable=pods,none"], 'may not contain additional enforcements when "none" is specified', "--enforce-node-allocatable"],
    [["--enforce-node-allocatable=foo"], 'option "foo" specified for enforceNodeAllocatable', "--enforce-node-allocatable"],
    [["--enforce-node-allocatable=pods,pods"], 'duplicated enforcements "pods"', "--enforce-node-allocatable"],
    [["--enforce-node-allocatable=pods,kube-reserved"], "kubeReservedCgroup (--kube-reserved-cgroup) must be specified", undefined],
    [["--cgroups-per-qos=false"], 'cgroupsPerQOS (--cgroups-per-qos) must be set to true when "pods" contained in enforceNodeAllocatable', "--cgroups-per-qos"],
    [["--system-reserved=gpu=1"], 'cannot reserve "gpu" resource in systemReserved', "--system-reserved"],
    [["--kube-reserved=memory=abc"], "kubeReserved memory=abc: quantities must match", "--kube-reserved"],
    [["--kube-reserved=memory=-1Gi"], 'resource quantity for "memory" cannot be negative: -1Gi', "--kube-reserved"],
    [["--container-log-max-size=10XB"], 'containerLogMaxSize (--container-log-max-size) "10XB" is not a quantity', "--container-log-max-size"],
    [["--container-log-max-files=1"], "containerLogMaxFiles (--container-log-max-files) must be greater than 1", "--container-log-max-files"],
    [["--sync-frequency=-1s"], "syncFrequency -1s must not be negative", "--sync-frequency"],
    [["--authorization-mode=Foo"], 'authorization.mode (--authorization-mode) "Foo" must be one of: "AlwaysAllow", "Webhook"', "--authorization-mode"],
    [["--oom-score-adj=-1001"], "oomScoreAdj (--oom-score-adj) -1001 must be between -1000 and 1000", "--oom-score-adj"],
    [["--image-import-path=images"], 'imageImportPath "images" must be an absolute path', "--image-import-path"],
  ] as [string[], string, string | undefined][])("%p", async (argv, message, source) => {
    const err = await loadError(argv);
    expect(err.message).toContain("invalid configuration: ");
    expect(err.message).toContain(message);
    if (source) expect(err.message).toContain(`(set by ${source})`);
    expect(err.field).toBeDefined();
  });

  test.each([
    ["port: 70000\n", "port (--port) 70000", "port"],
    ["nodeLeaseDurationSeconds: -1\n", "nodeLeaseDurationSeconds must be greater than 0", "nodeLeaseDurationSeconds"],
    ["address: nowhere\n", 'address (--address) "nowhere" is not a valid IP address', "address"],
    ["imageGCHighThresholdPercent: 50\nimageGCLowThresholdPercent: 60\n", "must be less than imageGCHighThresholdPercent", "imageGCLowThresholdPercent"],
    [
      "serializeImagePulls: true\nmaxParallelImagePulls: 3\n",
      "maxParallelImagePulls cannot be larger than 1 unless SerializeImagePulls (--serialize-image-pulls) is set to false",
      "maxParallelImagePulls",
    ],
    ["maxParallelImagePulls: 0\n", "maxParallelImagePulls 0 must be a positive number", "maxParallelImagePulls"],
    ["userNamespaces:\n  idsPerPod: 1000\n", "invalid configuration: userNamespaces.idsPerPod must not be less than 65536", "userNamespaces"],
    ["userNamespaces:\n  idsPerPod: 100000\n", "invalid configuration: userNamespaces.idsPerPod must be a multiple of 65536", "userNamespaces"],
    ["featureGates:\n  UserNamespacesSupport: false\n", "cannot set feature gate UserNamespacesSupport to false, feature is locked to true", "featureGates"],
  ])("from the file: %p", async (body, message, field) => {
    const p = file(body);
    const err = await loadError(["--config", p]);
    expect(err.message).toContain(message);
    expect(err.message).toContain(`(set by ${p})`);
    expect(err.field).toBe(field);
    expect(err.source).toBe(p);
  });

  test.each([
    ["node-role.kubernetes.io/worker=", false],
    ["example.k8s.io/x=1", false],
    ["node.kubernetes.io/pool=a", true],
    ["kubelet.kubernetes.io/x=1", true],
    ["topology.kubernetes.io/zone=z1", true],
    ["example.com/team=a", true],
  ])("--node-labels=%s allowed: %p (kubelet's restricted namespaces)", async (label, ok) => {
    if (ok) expect((await loadConfig([`--node-labels=${label}`])).flags.nodeLabels).toEqual(Object.fromEntries([label.split("=")]));
    else expect((await loadError([`--node-labels=${label}`])).message).toContain("unknown 'kubernetes.io' or 'k8s.io' labels specified with --node-labels");
  });

  test("node labels are checked", async () => {
    const err = await loadError(["--node-labels=bad key=1"]);
    expect(err.message).toContain("--node-labels");
    expect(err.message).toContain('"bad key"');
  });
});
