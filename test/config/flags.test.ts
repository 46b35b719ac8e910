import { describe, expect, test } from "bun:test";
import { ConfigError } from "../../src/config/errors.ts";
import { findFlag, KUBELET_FLAGS, parseArgs } from "../../src/config/flags.ts";

const values = (argv: string[]) => parseArgs(argv).assignments.map((a) => [a.spec.name, a.value]);

describe("kubelet flag syntax", () => {
  test.each([
    [["--port=1234"], [["port", 1234]]],
    [["--port", "1234"], [["port", 1234]]],
    [["--port", "-5"], [["port", -5]]], // pflag takes the next argument whatever it looks like
    [["--fail-swap-on"], [["fail-swap-on", true]]],
    [["--fail-swap-on=false"], [["fail-swap-on", false]]],
    [["--fail-swap-on=0"], [["fail-swap-on", false]]],
    [["-v=4"], [["v", 4]]],
    [["-v", "4"], [["v", 4]]],
    [["-v4"], [["v", 4]]],
    [["--v", "4"], [["v", 4]]],
    [["--v=2"], [["v", 2]]],
    [["-h"], [["help", true]]],
    [["--version"], [["version", "true"]]],
    [["--version=raw"], [["version", "raw"]]],
    [["--eviction_hard=memory.available<1Gi"], [["eviction-hard", { "memory.available": "1Gi" }]]],
    [["--sync-frequency=90s"], [["sync-frequency", "1m30s"]]],
    [["--address=::"], [["address", "::"]]],
    [["--healthz-bind-address", "127.000.0.1"], [["healthz-bind-address", "127.000.0.1"]]],
    [["--enforce-node-allocatable=pods,kube-reserved"], [["enforce-node-allocatable", ["pods", "kube-reserved"]]]],
    [["--enforce-node-allocatable="], [["enforce-node-allocatable", []]]],
    [["--feature-gates=A=true,B=false"], [["feature-gates", { A: true, B: false }]]],
    [["--pod-max-pids=4096"], [["pod-max-pids", 4096]]],
    [
      ["--vmodule=foo*=3,bar=1"],
      [
        [
          "vmodule",
          [
            { filePattern: "foo*", verbosity: 3 },
            { filePattern: "bar", verbosity: 1 },
          ],
        ],
      ],
    ],
    [["--manifest-url-header", "a:1,b:2"], [["manifest-url-header", { a: ["1"], b: ["2"] }]]],
    [
      ["--evict-static-pods", "--eviction-trace=/tmp/t.jsonl"],
      [
        ["evict-static-pods", true],
        ["eviction-trace", "/tmp/t.jsonl"],
      ],
    ],
  ])("%p", (argv, want) => {
    expect(values(argv)).toEqual(want as unknown[][]);
  });

  test.each([
    [["--foo"], "unknown flag: --foo"],
    [["--foo=1"], "unknown flag: --foo"],
    [["-x"], "unknown shorthand flag: 'x' in -x"],
    [["-port=1"], "unknown shorthand flag: 'p' in -port=1"],
    [["--port"], "flag needs an argument: --port"],
    [["-v"], "flag needs an argument: 'v' in -v"],
    [["--port=abc"], 'invalid argument "abc" for "--port" flag: strconv.ParseInt: parsing "abc": invalid syntax'],
    [["--port=70000000000"], 'invalid argument "70000000000" for "--port" flag: strconv.ParseInt: parsing "70000000000": value out of range'],
    [["--fail-swap-on=yes"], 'invalid argument "yes" for "--fail-swap-on" flag: strconv.ParseBool: parsing "yes": invalid syntax'],
    [["--sync-frequency=10"], 'invalid argument "10" for "--sync-frequency" flag: time: missing unit in duration "10"'],
    [["--eviction-hard=memory.available=1Gi"], 'invalid argument "memory.available=1Gi" for "--eviction-hard" flag: malformed pair, expect string<string'],
    [["--eviction-soft-grace-period=memory.available<1m"], 'for "--eviction-soft-grace-period" flag: malformed pair, expect string=string'],
    [["--feature-gates=Foo"], 'for "--feature-gates" flag: malformed pair, expect string=bool'],
    [["--address=not-an-ip"], 'invalid argument "not-an-ip" for "--address" flag: "not-an-ip" is not a valid IP address'],
    [["-v=-1"], 'for "--v" flag: verbosity must be a non-negative integer'],
    [["run"], "unknown command run"],
    [["--", "--port=1"], "unknown command --port=1"],
  ])("%p is rejected", (argv, message) => {
    let err: unknown;
    try {
      parseArgs(argv);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toContain(message);
  });

  test("deprecated config flags get pflag's notice once", () => {
    const { warnings } = parseArgs(["--max-pods=10", "--max-pods=20", "--kubeconfig=/k"]);
    expect(warnings).toEqual([
      "Flag --max-pods has been deprecated, This parameter should be set via the config file specified by the Kubelet's --config flag. See https://kubernetes.io/docs/tasks/administer-cluster/kubelet-config-file/ for more information.",
    ]);
  });
});

describe("KUBELET_FLAGS table", () => {
  const required = [
    "config",
    "kubeconfig",
    "hostname-override",
    "node-ip",
    "pod-manifest-path",
    "manifest-url",
    "manifest-url-header",
    "container-runtime-endpoint",
    "image-service-endpoint",
    "root-dir",
    "lock-file",
    "exit-on-lock-contention",
    "eviction-hard",
    "eviction-soft",
    "eviction-soft-grace-period",
    "eviction-minimum-reclaim",
    "eviction-pressure-transition-period",
    "eviction-max-pod-grace-period",
    "kernel-memcg-notification",
    "address",
    "port",
    "read-only-port",
    "healthz-port",
    "healthz-bind-address",
    "max-pods",
    "cgroup-root",
    "cgroups-per-qos",
    "cgroup-driver",
    "system-reserved",
    "kube-reserved",
    "enforce-node-allocatable",
    "node-labels",
    "register-node",
    "sync-frequency",
    "file-check-frequency",
    "http-check-frequency",
    "image-gc-high-threshold",
    "image-gc-low-threshold",
    "pod-max-pids",
    "fail-swap-on",
    "feature-gates",
    "v",
    "eviction-trace",
    "evict-static-pods",
  ];
  test.each(required)("--%s exists", (name) => {
    const f = findFlag(name);
    expect(f).toBeDefined();
    expect(f!.description.length).toBeGreaterThan(10);
  });

  test("names are unique and each flag targets exactly one setting", () => {
    const names = KUBELET_FLAGS.map((f) => f.name);
    expect(new Set(names).size).toBe(names.length);
    for (const f of KUBELET_FLAGS) {
      if (f.name === "config") continue;
      expect(Number(f.configField !== undefined) + Number(f.nodeFlag !== undefined)).toBe(1);
    }
  });

  test("defaults are printed as the kubelet prints them", () => {
    expect(findFlag("sync-frequency")!.default).toBe("1m0s");
    expect(findFlag("port")!.default).toBe("10250");
    expect(findFlag("cgroup-driver")!.default).toBe('"cgroupfs"');
    expect(findFlag("port")!.type).toBe("int32");
    expect(findFlag("eviction-hard")!.type).toBe("mapStringString");
    expect(findFlag("eviction-hard")!.configField).toBe("evictionHard");
    expect(findFlag("v")!.shorthand).toBe("v");
  });
});
