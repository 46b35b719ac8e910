// The logind drop-in that raises InhibitDelayMaxSec to the shutdown grace period, as upstream's
// OverrideInhibitDelay writes it: /etc/systemd/logind.conf.d/99-kubelet.conf, mode 0644, the
// seconds rounded to a whole number. logind reads it on reload (SIGHUP; logind.ts).
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export const LOGIND_CONFIG_DIRECTORY = "/etc/systemd/logind.conf.d/";
export const KUBELET_LOGIND_CONF = "99-kubelet.conf";

export function logindOverrideContent(inhibitDelayMaxMs: number): string {
  return `# Kubelet logind override\n[Login]\nInhibitDelayMaxSec=${Math.round(inhibitDelayMaxMs / 1000)}\n`;
}

/** Writes the drop-in; returns its path. */
export function writeLogindOverride(inhibitDelayMaxMs: number, dir = LOGIND_CONFIG_DIRECTORY): string {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o755 });
  } catch (e) {
    throw new Error(`failed creating ${dir} directory: ${(e as Error).message}`);
  }
  const path = join(dir, KUBELET_LOGIND_CONF);
  try {
    writeFileSync(path, logindOverrideContent(inhibitDelayMaxMs), { mode: 0o644 });
  } catch (e) {
    throw new Error(`failed writing logind shutdown inhibit override file ${path}: ${(e as Error).message}`);
  }
  return path;
}
