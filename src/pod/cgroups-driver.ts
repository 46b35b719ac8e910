// Which cgroup driver the kubelet side uses, and the check that the container runtime uses the same one.
// Upstream v1.31 (cmd/kubelet/app/server.go getCgroupDriverFromCRI, feature gate
// KubeletCgroupDriverFromCRI, beta and on by default since v1.31): before the container manager is
// built the kubelet asks the runtime's RuntimeConfig; a runtime that reports a driver overrides
// cgroupDriver ("Using cgroup driver setting received from the CRI runtime"); UNIMPLEMENTED falls back
// to the configured one. bunlet does that at start when the runtime answers then (adoptCgroupDriverFromCRI).
// Beyond upstream: once the runtime answers (bunlet also comes up while it is down), the driver is
// checked again — RuntimeConfig, else containerd's verbose Status config (SystemdCgroup, for
// containerd 1.6/1.7 that lack RuntimeConfig) — and a mismatch stops the agent with both drivers named,
// instead of every sandbox failing later with runc's "expected cgroupsPath to be of format
// slice:prefix:name". When the runtime tells nothing, a warning and bunlet goes on.
import type { CriClient } from "../cri/client.ts";
import { driverFromRuntimeConfig, runtimeCgroupDriver, UnknownRuntimeCgroupDriverError, type RuntimeDriverReport } from "../cri/runtime-config.ts";
import { GrpcCode, GrpcError } from "../cri/grpc.ts";
import { kv, log } from "../log.ts";
import type { CgroupDriver } from "./cgroups-config.ts";

export class CgroupDriverMismatchError extends Error {
  constructor(
    readonly kubeletDriver: CgroupDriver,
    readonly runtimeDriver: CgroupDriver,
    detail: string,
  ) {
    super(
      `cgroup driver mismatch: bunlet uses cgroupDriver ${JSON.stringify(kubeletDriver)} but the container runtime uses ${JSON.stringify(runtimeDriver)} (${detail}); ` +
        `set cgroupDriver: ${runtimeDriver} (--cgroup-driver=${runtimeDriver}) or configure the runtime for ${kubeletDriver}` +
        (kubeletDriver === "systemd" ? " (containerd: SystemdCgroup = true in the runc options)" : " (containerd: SystemdCgroup = false)"),
    );
    this.name = "CgroupDriverMismatchError";
  }
}

/** Pure: the mismatch (an error to stop on) between bunlet's driver and what the runtime reported, if any. */
export function cgroupDriverMismatch(kubeletDriver: CgroupDriver, report: RuntimeDriverReport): CgroupDriverMismatchError | undefined {
  if (!report.driver || report.driver === kubeletDriver) return undefined;
  return new CgroupDriverMismatchError(kubeletDriver, report.driver, report.detail);
}

/** KubeletConfiguration's cgroupDriver as a driver ("cgroupfs" unless "systemd"; validation refused others). */
export function configuredCgroupDriver(value: string | undefined): CgroupDriver {
  return value === "systemd" ? "systemd" : "cgroupfs";
}

const unreachable = (e: unknown) => !(e instanceof GrpcError) || e.code === GrpcCode.UNAVAILABLE || e.code === GrpcCode.DEADLINE_EXCEEDED;

/**
 * Upstream's start-up step (v1.31, KubeletCgroupDriverFromCRI on unless the gate says false): the
 * runtime's RuntimeConfig driver wins over the configured one. UNIMPLEMENTED (containerd 1.6) or an
 * unset `linux` keep the configured driver; a runtime not reachable yet keeps it too (bunlet then
 * checks once it answers: verifyRuntimeCgroupDriver). An unknown driver value throws, as upstream.
 */
export async function adoptCgroupDriverFromCRI(
  cri: Pick<CriClient, "runtimeConfig">,
  configured: CgroupDriver,
  featureGates: Record<string, boolean> = {},
): Promise<CgroupDriver> {
  if (featureGates.KubeletCgroupDriverFromCRI === false) return configured;
  let driver: CgroupDriver | undefined;
  try {
    driver = driverFromRuntimeConfig(await cri.runtimeConfig());
  } catch (e) {
    if (e instanceof UnknownRuntimeCgroupDriverError) throw e;
    if (e instanceof GrpcError && e.code === GrpcCode.UNIMPLEMENTED) {
      log.info(
        `CRI implementation should be updated to support RuntimeConfig when KubeletCgroupDriverFromCRI feature gate has been enabled. Falling back to using cgroupDriver from kubelet config. ${kv({ cgroupDriver: configured })}`,
      );
      return configured;
    }
    if (unreachable(e)) {
      log.info(
        `container runtime not reachable at start; using cgroupDriver from kubelet config, checked against the runtime once it answers ${kv({ cgroupDriver: configured, error: (e as Error).message })}`,
      );
      return configured;
    }
    throw e;
  }
  if (!driver) return configured;
  log.info(
    `Using cgroup driver setting received from the CRI runtime ${kv({ cgroupDriver: driver, configured: driver !== configured ? configured : undefined })}`,
  );
  return driver;
}

/**
 * Once the runtime answers: the mismatch error to stop the agent with, or undefined (same driver, or the
 * runtime did not tell: then one warning). A failing query is a warning too: the pods' own errors follow.
 */
export async function verifyRuntimeCgroupDriver(
  cri: Pick<CriClient, "runtimeConfig" | "status">,
  kubeletDriver: CgroupDriver,
): Promise<CgroupDriverMismatchError | undefined> {
  let report: RuntimeDriverReport;
  try {
    report = await runtimeCgroupDriver(cri);
  } catch (e) {
    log.warn(`cannot ask the container runtime for its cgroup driver; going on with ${kubeletDriver} ${kv({ error: (e as Error).message })}`);
    return undefined;
  }
  if (!report.driver) {
    log.warn(
      `the container runtime does not tell its cgroup driver; going on with ${kubeletDriver} unchecked ${kv({ cgroupDriver: kubeletDriver, why: report.detail })}`,
    );
    return undefined;
  }
  const mismatch = cgroupDriverMismatch(kubeletDriver, report);
  if (!mismatch) log.info(`cgroup driver matches the container runtime's ${kv({ cgroupDriver: kubeletDriver, source: report.source, detail: report.detail })}`);
  return mismatch;
}

/**
 * The start-up step on the configured runtime endpoint (one short attempt: bunlet does not wait for the
 * runtime here, unlike upstream's three tries): the configuration with cgroupDriver as the runtime says.
 */
export async function withCgroupDriverFromCRI<C extends { containerRuntimeEndpoint: string; cgroupDriver?: string; featureGates?: Record<string, boolean> }>(
  config: C,
  connect: (endpoint: string) => Pick<CriClient, "runtimeConfig" | "close">,
): Promise<C> {
  const configured = configuredCgroupDriver(config.cgroupDriver);
  if (config.featureGates?.KubeletCgroupDriverFromCRI === false) return config;
  let cri: Pick<CriClient, "runtimeConfig" | "close">;
  try {
    cri = connect(config.containerRuntimeEndpoint);
  } catch {
    return config; // a bad endpoint is reported where the agent builds its client
  }
  try {
    const driver = await adoptCgroupDriverFromCRI(cri, configured, config.featureGates);
    return driver === config.cgroupDriver ? config : { ...config, cgroupDriver: driver };
  } finally {
    cri.close();
  }
}
