// Semantic validation of the merged configuration, mirroring
// pkg/kubelet/apis/config/validation/validation.go (ValidateKubeletConfiguration), plus the
// checks bunlet needs because it acts on a field (cgroupDriver, quantities, reserved resources,
// listen addresses). Messages keep upstream's "invalid configuration: field (--flag) value …"
// shape and add where the value came from.
import { isIP } from "node:net";
import { parseDuration } from "./duration.ts";
import { ConfigError, showValue } from "./errors.ts";
import type { KubeletConfiguration } from "./kubelet-config.ts";
import { parseQuantity } from "./quantity.ts";
import { quantityProblem } from "./go-types.ts";
import { reservedSystemCPUsProblems } from "./reserved-cpus.ts";

/** Where each field's value came from: "/path/config.yaml", "--port", or absent for defaults. */
export type FieldSources = Record<string, string>;

export interface ValidationProblem {
  field: string;
  value: unknown;
  message: string;
}

const ENFORCEMENTS = ["pods", "system-reserved", "system-reserved-compressible", "kube-reserved", "kube-reserved-compressible", "none"];
const RESERVABLE = ["cpu", "memory", "ephemeral-storage", "pid"];

type Bad = (field: string, value: unknown, message: string) => void;

/** Returns every problem found (empty when valid), area by area in upstream's order. Pure; see assertValidConfiguration. */
export function validateKubeletConfiguration(kc: KubeletConfiguration): ValidationProblem[] {
  const out: ValidationProblem[] = [];
  const bad: Bad = (field, value, message) => out.push({ field, value, message });
  validateNodeSettings(kc, bad);
  validateImageGC(kc, bad);
  validateLimits(kc, bad);
  validateImagePulls(kc, bad);
  validateModesAndPolicies(kc, bad);
  validateEnforcements(kc, bad);
  validateShutdown(kc, bad);
  validateRuntimeAndLogs(kc, bad);
  validateActedOn(kc, bad);
  validateUserNamespaces(kc, bad);
  return out;
}

/** The node lease, system cgroups, event rate and healthz port. */
function validateNodeSettings(kc: KubeletConfiguration, bad: Bad): void {
  const isPort = (p: number) => p >= 1 && p <= 65535;
  if (kc.nodeLeaseDurationSeconds <= 0) bad("nodeLeaseDurationSeconds", kc.nodeLeaseDurationSeconds, "nodeLeaseDurationSeconds must be greater than 0");
  if (kc.systemCgroups && !kc.cgroupRoot)
    bad("systemCgroups", kc.systemCgroups, "systemCgroups (--system-cgroups) was specified and cgroupRoot (--cgroup-root) was not specified");
  if (kc.eventBurst < 0) bad("eventBurst", kc.eventBurst, `eventBurst (--event-burst) ${kc.eventBurst} must not be a negative number`);
  if (kc.eventRecordQPS < 0) bad("eventRecordQPS", kc.eventRecordQPS, `eventRecordQPS (--event-qps) ${kc.eventRecordQPS} must not be a negative number`);
  if (kc.healthzPort !== 0 && !isPort(kc.healthzPort))
    bad("healthzPort", kc.healthzPort, `healthzPort (--healthz-port) ${kc.healthzPort} must be between 1 and 65535, inclusive (or 0 to disable)`);
}

/** Image garbage collection: the disk thresholds and the image ages. */
function validateImageGC(kc: KubeletConfiguration, bad: Bad): void {
  const high = kc.imageGCHighThresholdPercent;
  const low = kc.imageGCLowThresholdPercent;
  if (high < 0 || high > 100)
    bad("imageGCHighThresholdPercent", high, `imageGCHighThresholdPercent (--image-gc-high-threshold) ${high} must be between 0 and 100, inclusive`);
  if (low < 0 || low > 100)
    bad("imageGCLowThresholdPercent", low, `imageGCLowThresholdPercent (--image-gc-low-threshold) ${low} must be between 0 and 100, inclusive`);
  if (low >= high)
    bad(
      "imageGCLowThresholdPercent",
      low,
      `imageGCLowThresholdPercent (--image-gc-low-threshold) ${low} must be less than imageGCHighThresholdPercent (--image-gc-high-threshold) ${high}`,
    );
  if (parseDuration(kc.imageMinimumGCAge) < 0) bad("imageMinimumGCAge", kc.imageMinimumGCAge, `imageMinimumGCAge ${kc.imageMinimumGCAge} must not be negative`);
  if (parseDuration(kc.imageMaximumGCAge) < 0) bad("imageMaximumGCAge", kc.imageMaximumGCAge, `imageMaximumGCAge ${kc.imageMaximumGCAge} must not be negative`);
  if (parseDuration(kc.imageMaximumGCAge) > 0 && parseDuration(kc.imageMaximumGCAge) <= parseDuration(kc.imageMinimumGCAge))
    bad("imageMaximumGCAge", kc.imageMaximumGCAge, `imageMaximumGCAge ${kc.imageMaximumGCAge} must be greater than imageMinimumGCAge ${kc.imageMinimumGCAge}`);
}

/** Bits, API and registry rates, counts, the OOM score, the nice value and the ports within their ranges. */
function validateLimits(kc: KubeletConfiguration, bad: Bad): void {
  const isPort = (p: number) => p >= 1 && p <= 65535;
  for (const [f, flag] of [
    ["iptablesDropBit", "iptables-drop-bit"],
    ["iptablesMasqueradeBit", "iptables-masquerade-bit"],
  ] as const) {
    if (kc[f] < 0 || kc[f] > 31) bad(f, kc[f], `${f} (--${flag}) ${kc[f]} must be between 0 and 31, inclusive`);
  }
  for (const [f, flag] of [
    ["kubeAPIBurst", "kube-api-burst"],
    ["kubeAPIQPS", "kube-api-qps"],
    ["maxOpenFiles", "max-open-files"],
    ["maxPods", "max-pods"],
    ["registryBurst", "registry-burst"],
    ["registryPullQPS", "registry-qps"],
  ] as const) {
    if (kc[f] < 0) bad(f, kc[f], `${f} (--${flag}) ${kc[f]} must not be a negative number`);
  }
  if ((kc.podsPerCore ?? 0) < 0) bad("podsPerCore", kc.podsPerCore, `podsPerCore (--pods-per-core) ${kc.podsPerCore} must not be a negative number`);
  if (kc.nodeStatusMaxImages < -1)
    bad("nodeStatusMaxImages", kc.nodeStatusMaxImages, `nodeStatusMaxImages (--node-status-max-images) ${kc.nodeStatusMaxImages} must be -1 or greater`);
  if (kc.oomScoreAdj < -1000 || kc.oomScoreAdj > 1000)
    bad("oomScoreAdj", kc.oomScoreAdj, `oomScoreAdj (--oom-score-adj) ${kc.oomScoreAdj} must be between -1000 and 1000, inclusive`);
  if (kc.schedulingNice < -20 || kc.schedulingNice > 19)
    bad("schedulingNice", kc.schedulingNice, `schedulingNice ${kc.schedulingNice} must be between -20 and 19, inclusive`);
  if (kc.autonomyCacheMaxBytes < 1024 * 1024)
    bad("autonomyCacheMaxBytes", kc.autonomyCacheMaxBytes, `autonomyCacheMaxBytes ${kc.autonomyCacheMaxBytes} must be at least 1048576 (1 MiB)`);
  if (kc.imageImportPath !== "" && !kc.imageImportPath.startsWith("/"))
    bad("imageImportPath", kc.imageImportPath, `imageImportPath ${JSON.stringify(kc.imageImportPath)} must be an absolute path, or "" for <root-dir>/images`);
  if (!isPort(kc.port)) bad("port", kc.port, `port (--port) ${kc.port} must be between 1 and 65535, inclusive`);
  if (kc.readOnlyPort !== 0 && !isPort(kc.readOnlyPort))
    bad("readOnlyPort", kc.readOnlyPort, `readOnlyPort (--read-only-port) ${kc.readOnlyPort} must be between 0 and 65535, inclusive`);
}

/** Parallel image pulls. */
function validateImagePulls(kc: KubeletConfiguration, bad: Bad): void {
  if (kc.maxParallelImagePulls !== undefined && kc.maxParallelImagePulls < 1)
    bad("maxParallelImagePulls", kc.maxParallelImagePulls, `maxParallelImagePulls ${kc.maxParallelImagePulls} must be a positive number`);
  if (kc.serializeImagePulls && (kc.maxParallelImagePulls ?? 0) > 1)
    bad(
      "maxParallelImagePulls",
      kc.maxParallelImagePulls,
      "maxParallelImagePulls cannot be larger than 1 unless SerializeImagePulls (--serialize-image-pulls) is set to false",
    );
}

/** The deprecated run-once mode and the fields that name a policy, driver or format. */
function validateModesAndPolicies(kc: KubeletConfiguration, bad: Bad): void {
  if (kc.runOnce) bad("runOnce", kc.runOnce, "runOnce (--runOnce) true, Runonce mode has been deprecated and should not be set");
  oneOf(bad, "topologyManagerPolicy", "--topology-manager-policy", kc.topologyManagerPolicy, ["none", "best-effort", "restricted", "single-numa-node"]);
  oneOf(bad, "topologyManagerScope", "--topology-manager-scope", kc.topologyManagerScope, ["container", "pod"]);
  oneOf(bad, "hairpinMode", "--hairpin-mode", kc.hairpinMode, ["none", "hairpin-veth", "promiscuous-bridge"]);
  oneOf(bad, "cgroupDriver", "--cgroup-driver", kc.cgroupDriver, ["cgroupfs", "systemd"]);
  oneOf(bad, "authorization.mode", "--authorization-mode", kc.authorization.mode, ["AlwaysAllow", "Webhook"]);
  oneOf(bad, "logging.format", "--logging-format", kc.logging.format, ["text", "json"]);
  oneOf(bad, "memorySwap.swapBehavior", undefined, kc.memorySwap.swapBehavior ?? "", ["", "NoSwap", "LimitedSwap"]);
  if (kc.memoryReservationPolicy !== undefined) oneOf(bad, "memoryReservationPolicy", undefined, kc.memoryReservationPolicy, ["None", "TieredReservation"]);
}

/** Graceful node shutdown: the grace periods, overall or by pod priority. */
function validateShutdown(kc: KubeletConfiguration, bad: Bad): void {
  const grace = parseDuration(kc.shutdownGracePeriod);
  const crit = parseDuration(kc.shutdownGracePeriodCriticalPods);
  if (crit > grace)
    bad(
      "shutdownGracePeriodCriticalPods",
      kc.shutdownGracePeriodCriticalPods,
      `shutdownGracePeriodCriticalPods ${kc.shutdownGracePeriodCriticalPods} must be <= shutdownGracePeriod ${kc.shutdownGracePeriod}`,
    );
  if (grace < 0 || (grace > 0 && grace < 1e9))
    bad("shutdownGracePeriod", kc.shutdownGracePeriod, `shutdownGracePeriod ${kc.shutdownGracePeriod} must be either zero or otherwise >= 1 sec`);
  if (crit < 0 || (crit > 0 && crit < 1e9))
    bad(
      "shutdownGracePeriodCriticalPods",
      kc.shutdownGracePeriodCriticalPods,
      `shutdownGracePeriodCriticalPods ${kc.shutdownGracePeriodCriticalPods} must be either zero or otherwise >= 1 sec`,
    );
  if ((kc.shutdownGracePeriodByPodPriority?.length ?? 0) > 0 && (grace > 0 || crit > 0))
    bad(
      "shutdownGracePeriodByPodPriority",
      kc.shutdownGracePeriodByPodPriority,
      "Cannot specify both shutdownGracePeriodByPodPriority and shutdownGracePeriod at the same time",
    );
}

/** The container runtime: memory throttling, its endpoint and the container logs. */
function validateRuntimeAndLogs(kc: KubeletConfiguration, bad: Bad): void {
  if (kc.memoryThrottlingFactor <= 0 || kc.memoryThrottlingFactor > 1)
    bad(
      "memoryThrottlingFactor",
      kc.memoryThrottlingFactor,
      `memoryThrottlingFactor ${kc.memoryThrottlingFactor} must be greater than 0 and less than or equal to 1.0`,
    );
  if (kc.containerRuntimeEndpoint === "") bad("containerRuntimeEndpoint", "", "the containerRuntimeEndpoint was not specified or empty");
  if (kc.containerLogMaxWorkers < 1) bad("containerLogMaxWorkers", kc.containerLogMaxWorkers, "containerLogMaxWorkers must be greater than or equal to 1");
  if (parseDuration(kc.containerLogMonitorInterval) < 3e9)
    bad(
      "containerLogMonitorInterval",
      kc.containerLogMonitorInterval,
      "containerLogMonitorInterval must be a positive time duration greater than or equal to 3s",
    );
  if (kc.containerLogMaxFiles <= 1)
    bad("containerLogMaxFiles", kc.containerLogMaxFiles, "containerLogMaxFiles (--container-log-max-files) must be greater than 1");
  const sizeProblem = quantityProblem(kc.containerLogMaxSize);
  if (sizeProblem)
    bad(
      "containerLogMaxSize",
      kc.containerLogMaxSize,
      `containerLogMaxSize (--container-log-max-size) ${showValue(kc.containerLogMaxSize)} is not a quantity (${sizeProblem}); want e.g. "10Mi"`,
    );
  if (!kc.podLogsDir.startsWith("/")) bad("podLogsDir", kc.podLogsDir, `pod logs path ${showValue(kc.podLogsDir)} must be absolute path`);
  if (kc.enableSystemLogQuery && !kc.enableSystemLogHandler) bad("enableSystemLogQuery", true, "enableSystemLogHandler is required for enableSystemLogQuery");
}

/** Fields bunlet acts on: reject what would only fail later, at listen or at a loop's first tick. */
function validateActedOn(kc: KubeletConfiguration, bad: Bad): void {
  for (const [f, flag] of [
    ["address", "--address"],
    ["healthzBindAddress", "--healthz-bind-address"],
  ] as const) {
    if (isIP(kc[f]) === 0) bad(f, kc[f], `${f} (${flag}) ${showValue(kc[f])} is not a valid IP address`);
  }
  for (const f of [
    "syncFrequency",
    "fileCheckFrequency",
    "httpCheckFrequency",
    "nodeStatusUpdateFrequency",
    "nodeStatusReportFrequency",
    "evictionPressureTransitionPeriod",
    "imageMinimumGCAge",
  ] as const) {
    if (parseDuration(kc[f]) < 0) bad(f, kc[f], `${f} ${kc[f]} must not be negative`);
  }
  for (const f of ["systemReserved", "kubeReserved"] as const) validateReserved(f, kc[f], bad);
  for (const m of reservedSystemCPUsProblems(kc)) bad("reservedSystemCPUs", kc.reservedSystemCPUs, m);
}

/** upstream validation_linux.go userNamespaces.idsPerPod, and the feature gate v1.37 locks on. */
function validateUserNamespaces(kc: KubeletConfiguration, bad: Bad): void {
  const unit = 65536;
  const ids = kc.userNamespaces?.idsPerPod;
  if (ids !== undefined) {
    const field = "userNamespaces";
    if (ids < unit) bad(field, ids, `invalid configuration: userNamespaces.idsPerPod must not be less than ${unit}`);
    else if (ids % unit !== 0) bad(field, ids, `invalid configuration: userNamespaces.idsPerPod must be a multiple of ${unit}`);
    else if (ids > 0xffff_ffff) bad(field, ids, `invalid configuration: userNamespaces.idsPerPod must not be more than ${0xffff_ffff}`);
  }
  if (kc.featureGates?.UserNamespacesSupport === false)
    bad("featureGates", "UserNamespacesSupport=false", "cannot set feature gate UserNamespacesSupport to false, feature is locked to true");
}

/** A field that names one of a fixed set of values. */
function oneOf(bad: Bad, field: string, flag: string | undefined, value: string, valid: string[]): void {
  if (!valid.includes(value)) {
    bad(field, value, `${field}${flag ? ` (${flag})` : ""} ${showValue(value)} must be one of: ${valid.map((v) => showValue(v)).join(", ")}`);
  }
}

/** Node allocatable enforcement: the options, their combinations and the cgroups they need. */
function validateEnforcements(kc: KubeletConfiguration, bad: Bad): void {
  const f = "enforceNodeAllocatable";
  const list = kc.enforceNodeAllocatable;
  const has = (k: string) => list.includes(k);
  if (has("system-reserved") && has("system-reserved-compressible"))
    bad(
      f,
      list,
      `both "system-reserved" and "system-reserved-compressible" cannot be specified together in enforceNodeAllocatable (--enforce-node-allocatable)`,
    );
  if (has("kube-reserved") && has("kube-reserved-compressible"))
    bad(f, list, `both "kube-reserved" and "kube-reserved-compressible" cannot be specified together in enforceNodeAllocatable (--enforce-node-allocatable)`);
  const seen = new Set<string>();
  for (const val of list) {
    if (seen.has(val)) {
      bad(f, list, `duplicated enforcements ${showValue(val)} in enforceNodeAllocatable (--enforce-node-allocatable)`);
      continue;
    }
    seen.add(val);
    if (!ENFORCEMENTS.includes(val)) {
      bad(
        f,
        val,
        `option ${showValue(val)} specified for enforceNodeAllocatable (--enforce-node-allocatable). Valid options are ${ENFORCEMENTS.map((e) => showValue(e)).join(", ")}`,
      );
      continue;
    }
    if (val === "none") {
      if (list.length > 1) bad(f, list, `enforceNodeAllocatable (--enforce-node-allocatable) may not contain additional enforcements when "none" is specified`);
      continue;
    }
    if (val.startsWith("system-reserved") && !kc.systemReservedCgroup)
      bad(
        "systemReservedCgroup",
        "",
        `systemReservedCgroup (--system-reserved-cgroup) must be specified when "system-reserved" or "system-reserved-compressible" included in enforceNodeAllocatable (--enforce-node-allocatable)`,
      );
    if (val.startsWith("kube-reserved") && !kc.kubeReservedCgroup)
      bad(
        "kubeReservedCgroup",
        "",
        `kubeReservedCgroup (--kube-reserved-cgroup) must be specified when "kube-reserved" or "kube-reserved-compressible" included in enforceNodeAllocatable (--enforce-node-allocatable)`,
      );
    if (!kc.cgroupsPerQOS)
      bad(
        "cgroupsPerQOS",
        false,
        `cgroupsPerQOS (--cgroups-per-qos) must be set to true when ${showValue(val)} contained in enforceNodeAllocatable (--enforce-node-allocatable)`,
      );
  }
}

// cmd/kubelet/app/server.go parseResourceList: cpu, memory, ephemeral-storage, pid (and
// hugepages-*), non-negative quantities.
function validateReserved(field: string, m: Record<string, string>, bad: Bad): void {
  for (const [name, value] of Object.entries(m)) {
    const path = `${field}[${JSON.stringify(name)}]`;
    if (!RESERVABLE.includes(name) && !name.startsWith("hugepages-")) {
      bad(path, value, `cannot reserve ${showValue(name)} resource in ${field}; valid resources are ${RESERVABLE.join(", ")} and hugepages-<size>`);
      continue;
    }
    const problem = quantityProblem(value);
    if (problem) {
      bad(path, value, `${field} ${name}=${value}: ${problem}; want a quantity such as "500Mi" or "200m"`);
      continue;
    }
    if (parseQuantity(value).nanos < 0n) bad(path, value, `resource quantity for ${showValue(name)} cannot be negative: ${value}`);
  }
}

/** Throws one ConfigError listing every problem, each naming its field, value and source. */
export function assertValidConfiguration(kc: KubeletConfiguration, sources: FieldSources = {}): void {
  const problems = validateKubeletConfiguration(kc);
  if (problems.length === 0) return;
  const describe = (p: ValidationProblem) => {
    const top = p.field.split(/[.[]/)[0]!;
    const from = sources[p.field] ?? sources[top];
    return `invalid configuration: ${p.message}${from ? ` (set by ${from})` : " (default)"}`;
  };
  const first = problems[0]!;
  throw new ConfigError(problems.map(describe).join("\n"), {
    field: first.field,
    value: first.value,
    source: sources[first.field] ?? sources[first.field.split(/[.[]/)[0]!],
  });
}
