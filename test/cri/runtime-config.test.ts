import { describe, expect, test } from "bun:test";
import { createCriClient } from "../../src/cri/client.ts";
import { createCodec } from "../../src/cri/codec.ts";
import { GrpcCode, GrpcError, type UnaryTransport } from "../../src/cri/grpc.ts";
import { driverFromRuntimeConfig, driverFromStatusInfo, runtimeCgroupDriver, UnknownRuntimeCgroupDriverError } from "../../src/cri/runtime-config.ts";

const codec = createCodec();

/** A transport answering by method path; records the calls. */
function byMethod(replies: Record<string, Uint8Array | GrpcError>) {
  const calls: string[] = [];
  const transport: UnaryTransport = {
    async unary(method) {
      calls.push(method);
      const r = replies[method];
      if (r === undefined) throw new GrpcError(method, GrpcCode.UNIMPLEMENTED, `unknown method ${method}`);
      if (r instanceof GrpcError) throw r;
      return r;
    },
    close() {},
  };
  return { cri: createCriClient({ endpoint: "/x.sock", transport, retryBudgetMs: 0 }), calls };
}

/** containerd 1.6's Status(verbose).info["config"], trimmed to the fields around the driver. */
function containerdConfig(
  opts: { runtimeType?: string; options?: Record<string, unknown> | null; defaultRuntimeName?: string; systemdCgroup?: boolean } = {},
): string {
  return JSON.stringify({
    containerd: {
      snapshotter: "overlayfs",
      defaultRuntimeName: opts.defaultRuntimeName ?? "runc",
      runtimes: {
        runc: {
          runtimeType: opts.runtimeType ?? "io.containerd.runc.v2",
          runtimePath: "",
          options: opts.options === undefined ? { BinaryName: "", Root: "/run/x/runc", SystemdCgroup: false } : opts.options,
          privileged_without_host_devices: false,
        },
      },
    },
    cni: { binDir: "/usr/lib/cni", confDir: "/etc/cni/net.d" },
    systemdCgroup: opts.systemdCgroup ?? false,
    sandboxImage: "bunlet.local/pause:1",
  });
}

describe("RuntimeConfig on the wire (field numbers of upstream api.proto)", () => {
  test.each([
    ["CGROUPFS", [0x0a, 0x02, 0x08, 0x01], "cgroupfs"],
    ["SYSTEMD (the enum's 0: an empty linux message)", [0x0a, 0x00], "systemd"],
  ] as const)("linux.cgroup_driver %s → %s", async (_name, bytes, want) => {
    // Hand-built replies: field 1 (linux, length-delimited) holding field 1 (cgroup_driver, varint) —
    // proves the field numbers against upstream's, not just a round trip through our own .proto.
    const { cri, calls } = byMethod({ "/runtime.v1.RuntimeService/RuntimeConfig": new Uint8Array(bytes) });
    expect(driverFromRuntimeConfig(await cri.runtimeConfig())).toBe(want);
    expect(calls).toEqual(["/runtime.v1.RuntimeService/RuntimeConfig"]);
  });

  test("an unset linux tells nothing; an unknown enum value is upstream's error", async () => {
    const { cri } = byMethod({ "/runtime.v1.RuntimeService/RuntimeConfig": new Uint8Array() });
    expect(driverFromRuntimeConfig(await cri.runtimeConfig())).toBeUndefined();
    expect(() => driverFromRuntimeConfig({ linux: { cgroupDriver: 7 } })).toThrow(new UnknownRuntimeCgroupDriverError(7));
    expect(() => driverFromRuntimeConfig({ linux: { cgroupDriver: 7 } })).toThrow("runtime returned an unknown cgroup driver 7");
  });
});

describe("driverFromStatusInfo (containerd's verbose status config)", () => {
  test.each([
    ["SystemdCgroup true", { options: { SystemdCgroup: true } }, "systemd"],
    ["SystemdCgroup false", { options: { SystemdCgroup: false } }, "cgroupfs"],
    ["no SystemdCgroup option (runc's default)", { options: { BinaryName: "" } }, "cgroupfs"],
    ["no options at all", { options: null }, "cgroupfs"],
    ["runc.v1 shim", { runtimeType: "io.containerd.runc.v1", options: { SystemdCgroup: true } }, "systemd"],
    ["legacy v1 linux runtime: top-level systemdCgroup", { runtimeType: "io.containerd.runtime.v1.linux", options: null, systemdCgroup: true }, "systemd"],
  ] as const)("%s → %s", (_name, opts, want) => {
    const r = driverFromStatusInfo({ config: containerdConfig(opts as Parameters<typeof containerdConfig>[0]) });
    expect(r.driver).toBe(want);
    expect(r.source).toBe("Status");
    expect(r.detail).toContain("containerd");
  });

  test.each([
    ["no config key", {}, 'no "config"'],
    ["config not JSON", { config: "{" }, "not JSON"],
    ["not containerd's shape (CRI-O, …)", { config: JSON.stringify({ crio: {} }) }, "not containerd's CRI config"],
    ["default runtime missing", { config: containerdConfig({ defaultRuntimeName: "kata" }) }, '"kata" is not in'],
    ["another shim", { config: containerdConfig({ runtimeType: "io.containerd.runsc.v1" }) }, "io.containerd.runsc.v1"],
    ["SystemdCgroup not a boolean", { config: containerdConfig({ options: { SystemdCgroup: "yes" } }) }, "not a boolean"],
  ] as const)("%s → no driver, says why", (_name, info, why) => {
    const r = driverFromStatusInfo(info as Record<string, string>);
    expect(r.driver).toBeUndefined();
    expect(r.source).toBe("none");
    expect(r.detail).toContain(why);
  });
});

describe("runtimeCgroupDriver", () => {
  const statusReply = (config: string) => codec.encode("StatusResponse", { status: { conditions: [] }, info: { config } });

  test("RuntimeConfig answers: Status is not asked", async () => {
    const { cri, calls } = byMethod({ "/runtime.v1.RuntimeService/RuntimeConfig": codec.encode("RuntimeConfigResponse", { linux: { cgroupDriver: 0 } }) });
    expect(await runtimeCgroupDriver(cri)).toEqual({ driver: "systemd", source: "RuntimeConfig", detail: "CRI RuntimeConfig linux.cgroup_driver=SYSTEMD" });
    expect(calls).toEqual(["/runtime.v1.RuntimeService/RuntimeConfig"]);
  });

  test("UNIMPLEMENTED (containerd 1.6) falls back to Status(verbose)", async () => {
    const { cri, calls } = byMethod({ "/runtime.v1.RuntimeService/Status": statusReply(containerdConfig({ options: { SystemdCgroup: true } })) });
    const r = await runtimeCgroupDriver(cri);
    expect(r).toMatchObject({ driver: "systemd", source: "Status" });
    expect(calls).toEqual(["/runtime.v1.RuntimeService/RuntimeConfig", "/runtime.v1.RuntimeService/Status"]);
  });

  test("neither tells: no driver, with both reasons", async () => {
    const { cri } = byMethod({ "/runtime.v1.RuntimeService/RuntimeConfig": new Uint8Array(), "/runtime.v1.RuntimeService/Status": statusReply("[]") });
    const r = await runtimeCgroupDriver(cri);
    expect(r.driver).toBeUndefined();
    expect(r.detail).toContain("RuntimeConfig left linux unset");
  });

  test("another RuntimeConfig error is thrown", async () => {
    const { cri } = byMethod({ "/runtime.v1.RuntimeService/RuntimeConfig": new GrpcError("/x", GrpcCode.INTERNAL, "boom") });
    await expect(runtimeCgroupDriver(cri)).rejects.toThrow("boom");
  });
});
