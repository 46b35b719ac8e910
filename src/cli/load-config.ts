// The configuration as cmd/kubelet/app builds it before anything starts: config/load.ts loadConfig
// (defaults < file < drop-ins < flags, validated), then the eviction maps parsed as NewMainKubelet
// parses them (eviction.ParseThresholdConfig), so a bad map fails at startup naming its file or flag.
// Here, not in config/, because eviction/ sits above config/ (docs/development.md#imports-run-down).
import { ConfigError } from "../config/errors.ts";
import type { KubeletConfiguration } from "../config/kubelet-config.ts";
import { type LoadedConfig, loadConfig } from "../config/load.ts";
import type { FieldSources } from "../config/validate.ts";
import { parseThresholdConfig } from "../eviction/thresholds-parse.ts";

/** loadConfig, then the eviction thresholds checked. Throws ConfigError. */
export async function loadKubeletConfig(argv: readonly string[]): Promise<LoadedConfig> {
  const loaded = await loadConfig(argv);
  checkEvictionThresholds(loaded.config, loaded.sources);
  return loaded;
}

/** Bad eviction maps fail at startup, as the kubelet fails constructing its eviction config. */
export function checkEvictionThresholds(config: KubeletConfiguration, sources: FieldSources): void {
  const label = (field: string) => (sources[field]?.startsWith("--") ? sources[field]! : field);
  try {
    parseThresholdConfig({
      evictionHard: config.evictionHard,
      evictionSoft: config.evictionSoft,
      evictionSoftGracePeriod: config.evictionSoftGracePeriod,
      evictionMinimumReclaim: config.evictionMinimumReclaim,
      enforceNodeAllocatable: config.enforceNodeAllocatable,
      mergeDefaultEvictionSettings: config.mergeDefaultEvictionSettings,
      hardSource: label("evictionHard"),
      softSource: label("evictionSoft"),
      gracePeriodSource: label("evictionSoftGracePeriod"),
      minReclaimSource: label("evictionMinimumReclaim"),
    });
  } catch (e) {
    const err = e as Error & { source?: string; key?: string; value?: string };
    const src = err.source ?? "";
    const field = ["evictionHard", "evictionSoft", "evictionSoftGracePeriod", "evictionMinimumReclaim"].find((f) => label(f) === src) ?? "evictionHard";
    const from = sources[field];
    throw new ConfigError(`failed to parse eviction thresholds: ${err.message}${from ? ` (set by ${from})` : " (default)"}`, {
      source: from,
      field: err.key ? `${field}[${JSON.stringify(err.key)}]` : field,
      value: err.value,
    });
  }
}
