import { describe, expect, test } from "bun:test";
import type { CriClient } from "../../src/cri/client.ts";
import { GrpcCode, GrpcError } from "../../src/cri/grpc.ts";
import type { RuntimeConfigResponse, StatusResponse } from "../../src/cri/types.ts";
import {
  adoptCgroupDriverFromCRI,
  CgroupDriverMismatchError,
  cgroupDriverMismatch,
  configuredCgroupDriver,
  verifyRuntimeCgroupDriver,
  withCgroupDriverFromCRI,
} from "../../src/pod/cgroups-driver.ts";

type Answer<T> = T | Error;
function fakeCri(runtimeConfig: Answer<RuntimeConfigResponse>, status: Answer<StatusResponse> = new Error("status not expected")) {
  let closed = false;
  const cri: Pick<CriClient, "runtimeConfig" | "status" | "close"> = {
    runtimeConfig: async () => {
      if (runtimeConfig instanceof Error) throw runtimeConfig;
      return runtimeConfig;
    },
    status: async () => {
      if (status instanceof Error) throw status;
      return status;
    },
    close: () => void (closed = true),
  };
  return { cri, closed: () => closed };
}
const unimplemented = () =>
  new GrpcError("/runtime.v1.RuntimeService/RuntimeConfig", GrpcCode.UNIMPLEMENTED, "unknown method RuntimeConfig for service runtime.v1.RuntimeService");
const reports = (d: "SYSTEMD" | "CGROUPFS"): RuntimeConfigResponse => ({ linux: { cgroupDriver: d } });
const containerdStatus = (systemdCgroup: boolean): StatusResponse => ({
  status: { conditions: [] },
  info: {
    config: JSON.stringify({
      containerd: { defaultRuntimeName: "runc", runtimes: { runc: { runtimeType: "io.containerd.runc.v2", options: { SystemdCgroup: systemdCgroup } } } },
    }),
  },
});

describe("configuredCgroupDriver", () => {
  test.each([
    ["systemd", "systemd"],
    ["cgroupfs", "cgroupfs"],
    [undefined, "cgroupfs"],
  ] as const)("%s → %s", (v, want) => expect(configuredCgroupDriver(v)).toBe(want));
});

describe("cgroupDriverMismatch", () => {
  test("same driver or none reported: no error", () => {
    expect(cgroupDriverMismatch("systemd", { driver: "systemd", source: "Status", detail: "x" })).toBeUndefined();
    expect(cgroupDriverMismatch("systemd", { source: "none", detail: "x" })).toBeUndefined();
  });
  test("the error names both drivers, where the runtime's came from, and both fixes", () => {
    const e = cgroupDriverMismatch("systemd", {
      driver: "cgroupfs",
      source: "Status",
      detail: "containerd config.containerd.runtimes.runc.options.SystemdCgroup=false",
    })!;
    expect(e).toBeInstanceOf(CgroupDriverMismatchError);
    expect(e.message).toBe(
      'cgroup driver mismatch: bunlet uses cgroupDriver "systemd" but the container runtime uses "cgroupfs" (containerd config.containerd.runtimes.runc.options.SystemdCgroup=false); ' +
        "set cgroupDriver: cgroupfs (--cgroup-driver=cgroupfs) or configure the runtime for systemd (containerd: SystemdCgroup = true in the runc options)",
    );
  });
});

describe("adoptCgroupDriverFromCRI (upstream v1.31 getCgroupDriverFromCRI)", () => {
  test.each([
    ["the runtime's driver wins over the configured one", reports("SYSTEMD"), "cgroupfs", "systemd"],
    ["the runtime's cgroupfs wins too", reports("CGROUPFS"), "systemd", "cgroupfs"],
    ["UNIMPLEMENTED (containerd 1.6): the configured one", unimplemented(), "systemd", "systemd"],
    ["linux unset: the configured one", { linux: null }, "systemd", "systemd"],
    ["runtime not reachable yet: the configured one", new GrpcError("/x", GrpcCode.UNAVAILABLE, "connect ENOENT"), "systemd", "systemd"],
    ["socket error outside gRPC: the configured one", new Error("connect ENOENT /run/x.sock"), "cgroupfs", "cgroupfs"],
  ] as const)("%s", async (_name, answer, configured, want) => {
    expect(await adoptCgroupDriverFromCRI(fakeCri(answer as Answer<RuntimeConfigResponse>).cri, configured)).toBe(want);
  });

  test("an unknown driver value is fatal, with upstream's message", async () => {
    await expect(adoptCgroupDriverFromCRI(fakeCri({ linux: { cgroupDriver: 9 } }).cri, "systemd")).rejects.toThrow(
      "runtime returned an unknown cgroup driver 9",
    );
  });

  test("another gRPC error is fatal (upstream: the runtime service failed to initialise)", async () => {
    await expect(adoptCgroupDriverFromCRI(fakeCri(new GrpcError("/x", GrpcCode.INTERNAL, "boom")).cri, "systemd")).rejects.toThrow("boom");
  });

  test("feature gate KubeletCgroupDriverFromCRI=false: the runtime is not asked", async () => {
    expect(await adoptCgroupDriverFromCRI(fakeCri(new Error("must not be called")).cri, "cgroupfs", { KubeletCgroupDriverFromCRI: false })).toBe("cgroupfs");
  });
});

describe("withCgroupDriverFromCRI (the start-up step on the configuration)", () => {
  test("returns the config with the runtime's driver and closes its client", async () => {
    const f = fakeCri(reports("SYSTEMD"));
    const config = { containerRuntimeEndpoint: "unix:///run/x.sock", cgroupDriver: "cgroupfs", other: 1 };
    const endpoints: string[] = [];
    const out = await withCgroupDriverFromCRI(config, (e) => (endpoints.push(e), f.cri));
    expect(out).toEqual({ ...config, cgroupDriver: "systemd" });
    expect(config.cgroupDriver).toBe("cgroupfs"); // not mutated
    expect(endpoints).toEqual(["unix:///run/x.sock"]);
    expect(f.closed()).toBe(true);
  });
  test("the same object when nothing changes; no connection with the gate off", async () => {
    const config = { containerRuntimeEndpoint: "/x.sock", cgroupDriver: "systemd" };
    expect(await withCgroupDriverFromCRI(config, () => fakeCri(unimplemented()).cri)).toBe(config);
    const gated = { ...config, featureGates: { KubeletCgroupDriverFromCRI: false } };
    expect(
      await withCgroupDriverFromCRI(gated, () => {
        throw new Error("must not connect");
      }),
    ).toBe(gated);
    // A bad endpoint: left for the agent's own client to report, as before.
    expect(
      await withCgroupDriverFromCRI({ ...config, containerRuntimeEndpoint: "tcp://x" }, () => {
        throw new Error("only unix sockets");
      }),
    ).toMatchObject({ cgroupDriver: "systemd" });
  });
});

describe("verifyRuntimeCgroupDriver (once the runtime answers)", () => {
  test("containerd 1.6 with SystemdCgroup=false against cgroupDriver systemd: the mismatch", async () => {
    const e = await verifyRuntimeCgroupDriver(fakeCri(unimplemented(), containerdStatus(false)).cri, "systemd");
    expect(e?.message).toContain('bunlet uses cgroupDriver "systemd" but the container runtime uses "cgroupfs"');
    expect(e?.message).toContain("SystemdCgroup=false");
  });
  test("matching drivers: no error", async () => {
    expect(await verifyRuntimeCgroupDriver(fakeCri(unimplemented(), containerdStatus(true)).cri, "systemd")).toBeUndefined();
    expect(await verifyRuntimeCgroupDriver(fakeCri(reports("CGROUPFS")).cri, "cgroupfs")).toBeUndefined();
  });
  test("RuntimeConfig reporting another driver than the one in use (runtime came up late): the mismatch", async () => {
    const e = await verifyRuntimeCgroupDriver(fakeCri(reports("SYSTEMD")).cri, "cgroupfs");
    expect(e?.message).toContain("CRI RuntimeConfig linux.cgroup_driver=SYSTEMD");
  });
  test("the runtime tells nothing, or the query fails: no error (a warning), bunlet goes on", async () => {
    expect(await verifyRuntimeCgroupDriver(fakeCri(unimplemented(), { status: null, info: {} }).cri, "systemd")).toBeUndefined();
    expect(await verifyRuntimeCgroupDriver(fakeCri(unimplemented(), new Error("status failed")).cri, "systemd")).toBeUndefined();
  });
});
