// What cgroup driver the container runtime uses, as far as it tells: CRI RuntimeConfig (since CRI
// v1.28; upstream kubelet's getCgroupDriverFromCRI reads linux.cgroup_driver), else the verbose Status
// info containerd 1.6/1.7 return (info["config"] is its CRI plugin config as JSON, with the default
// runtime's runc options incl. SystemdCgroup — what `crictl info` prints). Pure parsing plus one
// I/O function; the kubelet-side decision is src/pod/cgroups-driver.ts.
import { z } from "zod";
import { GrpcCode, GrpcError, type CriClient } from "./client.ts";
import type { RuntimeConfigResponse } from "./types.ts";

export type RuntimeCgroupDriver = "systemd" | "cgroupfs";

export interface RuntimeDriverReport {
  /** undefined: the runtime did not say. */
  driver?: RuntimeCgroupDriver;
  /** Where it was read: the RuntimeConfig RPC, the verbose Status info, or nowhere. */
  source: "RuntimeConfig" | "Status" | "none";
  /** Human-readable: which field said it, or why nothing did. */
  detail: string;
}

export class UnknownRuntimeCgroupDriverError extends Error {
  constructor(value: unknown) {
    // Upstream's message (cmd/kubelet/app/server.go getCgroupDriverFromCRI).
    super(`runtime returned an unknown cgroup driver ${String(value)}`);
    this.name = "UnknownRuntimeCgroupDriverError";
  }
}

/** linux.cgroup_driver of a RuntimeConfig reply; undefined when `linux` is unset (upstream then keeps its own). */
export function driverFromRuntimeConfig(r: RuntimeConfigResponse): RuntimeCgroupDriver | undefined {
  if (!r.linux) return undefined;
  const d = r.linux.cgroupDriver;
  if (d === "SYSTEMD" || d === 0) return "systemd";
  if (d === "CGROUPFS" || d === 1) return "cgroupfs";
  throw new UnknownRuntimeCgroupDriverError(d);
}

// containerd's criconfig.Config as JSON (only what says the driver; everything else passes through).
const runtimeEntry = z
  .object({
    runtimeType: z.string().optional(),
    options: z.record(z.string(), z.unknown()).nullish(),
  })
  .passthrough();
const containerdConfig = z
  .object({
    containerd: z
      .object({
        defaultRuntimeName: z.string().optional(),
        runtimes: z.record(z.string(), runtimeEntry).nullish(),
      })
      .passthrough(),
    /** The deprecated io.containerd.runtime.v1.linux shim's driver (systemd_cgroup). */
    systemdCgroup: z.boolean().optional(),
  })
  .passthrough();

const RUNC_SHIMS = ["io.containerd.runc.v2", "io.containerd.runc.v1"];

/** The driver containerd's default runtime uses, from Status(verbose).info; no driver when it cannot tell. */
export function driverFromStatusInfo(info: Record<string, string>): RuntimeDriverReport {
  const none = (detail: string): RuntimeDriverReport => ({ source: "none", detail });
  const text = info.config;
  if (text === undefined) return none(`the runtime's verbose status has no "config" (keys: ${Object.keys(info).join(",") || "none"})`);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    return none(`the runtime's verbose status "config" is not JSON: ${(e as Error).message}`);
  }
  const parsed = containerdConfig.safeParse(json);
  if (!parsed.success)
    return none(
      `the runtime's verbose status "config" is not containerd's CRI config: ${parsed.error.issues[0]?.message ?? "invalid"} at ${parsed.error.issues[0]?.path.join(".") ?? ""}`,
    );
  const c = parsed.data;
  const name = c.containerd.defaultRuntimeName || "runc";
  const rt = c.containerd.runtimes?.[name];
  if (!rt) return none(`containerd's default runtime ${JSON.stringify(name)} is not in its config's runtimes`);
  const field = `config.containerd.runtimes.${name}`;
  if (rt.runtimeType === "io.containerd.runtime.v1.linux")
    return {
      driver: c.systemdCgroup ? "systemd" : "cgroupfs",
      source: "Status",
      detail: `containerd config.systemdCgroup=${c.systemdCgroup ?? false} (runtime ${name}: ${rt.runtimeType})`,
    };
  if (rt.runtimeType !== undefined && !RUNC_SHIMS.includes(rt.runtimeType))
    return none(`containerd's default runtime ${JSON.stringify(name)} is ${rt.runtimeType}, whose cgroup driver bunlet cannot read`);
  const v = rt.options?.SystemdCgroup;
  if (v !== undefined && typeof v !== "boolean") return none(`${field}.options.SystemdCgroup is ${JSON.stringify(v)}, not a boolean`);
  // runc's default without the option is its cgroupfs driver.
  return { driver: v ? "systemd" : "cgroupfs", source: "Status", detail: `containerd ${field}.options.SystemdCgroup=${v ?? false}` };
}

const isUnimplemented = (e: unknown) => e instanceof GrpcError && e.code === GrpcCode.UNIMPLEMENTED;

/**
 * Asks the runtime: RuntimeConfig first; when it is unimplemented or leaves `linux` unset, the verbose
 * Status info. Throws what the runtime threw otherwise (it is up: the caller waited for it), and an
 * unknown cgroup_driver value.
 */
export async function runtimeCgroupDriver(cri: Pick<CriClient, "runtimeConfig" | "status">): Promise<RuntimeDriverReport> {
  let why: string;
  try {
    const d = driverFromRuntimeConfig(await cri.runtimeConfig());
    if (d) return { driver: d, source: "RuntimeConfig", detail: `CRI RuntimeConfig linux.cgroup_driver=${d === "systemd" ? "SYSTEMD" : "CGROUPFS"}` };
    why = "RuntimeConfig left linux unset";
  } catch (e) {
    if (!isUnimplemented(e)) throw e;
    why = "RuntimeConfig is unimplemented";
  }
  const status = await cri.status(true);
  const r = driverFromStatusInfo(status.info ?? {});
  return r.driver ? r : { ...r, detail: `${why}; ${r.detail}` };
}
