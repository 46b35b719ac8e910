// The CSI plugin's registration handler (upstream pkg/volume/csi/csi_plugin.go RegistrationHandler):
// a driver's versions must include a v1.x (the highest is kept, and a driver of the same name already
// registered with an equal or higher one refuses the newcomer); registering asks the driver's Node
// service for its node ID, volume limit and topology (NodeGetInfo) and installs them on the Node and
// its CSINode; de-registering uninstalls them. Error texts as upstream's, with its "kubernetes.io/csi: " prefix.
// With node autonomy (`installRetry`), a driver whose node info cannot be installed stays registered for
// the node's own volumes — the API server may be unreachable, and the cached pods' CSI volumes need the
// driver — and the install is tried again until it succeeds or the driver goes (bunlet's own; upstream
// refuses the driver).
import type { Clock, TimerHandle } from "../../../clock.ts";
import { kv, log } from "../../../log.ts";
import type { PluginHandler } from "../../pluginmanager/index.ts";
import { CSI_TIMEOUT_MS, type NodeGetInfo } from "./driver-client.ts";
import type { NodeInfoManager } from "./nodeinfo-manager.ts";
import { compareVersions, type GenericVersion, highestSupportedVersion, versionString } from "./version.ts";

/** Upstream CSIPluginName, the prefix of its messages (csi_util.go log). */
export const CSI_PLUGIN_NAME = "kubernetes.io/csi";
const csiLog = (msg: string) => `${CSI_PLUGIN_NAME}: ${msg}`;

/** A registered driver (upstream csiDrivers' Driver). */
export interface CSIDriver {
  endpoint: string;
  highestSupportedVersion: GenericVersion;
}

/** Go's %q of a string slice. */
const quotedList = (v: string[]) => `[${v.map((s) => JSON.stringify(s)).join(" ")}]`;

export interface CSIRegistrationHandler extends PluginHandler {
  /** The drivers registered now, by name (upstream csiDrivers). */
  drivers(): ReadonlyMap<string, CSIDriver>;
  /** No install is tried again any more (the agent stops). */
  stop(): void;
}

export interface CSIRegistrationHandlerDeps {
  nim: NodeInfoManager;
  nodeGetInfo: NodeGetInfo;
  timeoutMs?: number;
  /** Node autonomy: keep a driver whose node info could not be installed, trying again every `intervalMs`. */
  installRetry?: { clock: Pick<Clock, "setTimeout" | "clearTimeout">; intervalMs: number };
}

export function createCSIRegistrationHandler(deps: CSIRegistrationHandlerDeps): CSIRegistrationHandler {
  const drivers = new Map<string, CSIDriver>();
  /** Per driver kept without its node info, the timer of the next install. */
  const retries = new Map<string, TimerHandle>();
  let stopped = false;
  function cancelRetry(name: string): void {
    const t = retries.get(name);
    if (t) deps.installRetry?.clock.clearTimeout(t);
    retries.delete(name);
  }

  /** The driver stays registered; its node info is installed again later, while it is still this endpoint's. */
  function retryInstall(name: string, driver: CSIDriver, info: Awaited<ReturnType<NodeGetInfo>>, error: Error): void {
    const retry = deps.installRetry!;
    log.warn(`CSI driver registered without its node info; installing it again later ${kv({ driver: name, endpoint: driver.endpoint, error: error.message })}`);
    const attempt = () => {
      retries.delete(name);
      if (drivers.get(name) !== driver) return;
      deps.nim.installCSIDriver(name, info.nodeId, info.maxVolumesPerNode, info.accessibleTopology).then(
        () => log.info(`CSI driver node info installed ${kv({ driver: name, nodeID: info.nodeId })}`),
        () => {
          if (!stopped && drivers.get(name) === driver && !retries.has(name)) retries.set(name, retry.clock.setTimeout(attempt, retry.intervalMs));
        },
      );
    };
    cancelRetry(name);
    retries.set(name, retry.clock.setTimeout(attempt, retry.intervalMs));
  }

  function validateVersions(callerName: string, pluginName: string, versions: string[]): GenericVersion {
    if (versions.length === 0)
      throw new Error(csiLog(`${callerName} for CSI driver ${JSON.stringify(pluginName)} failed. Plugin returned an empty list for supported versions`));
    let highest: GenericVersion;
    try {
      highest = highestSupportedVersion(versions);
    } catch (e) {
      throw new Error(
        csiLog(
          `${callerName} for CSI driver ${JSON.stringify(pluginName)} failed. None of the versions specified ${quotedList(versions)} are supported. err=${(e as Error).message}`,
        ),
      );
    }
    const existing = drivers.get(pluginName);
    if (existing && compareVersions(existing.highestSupportedVersion, highest) >= 0)
      throw new Error(
        csiLog(
          `${callerName} for CSI driver ${JSON.stringify(pluginName)} failed. Another driver with the same name is already registered with a higher supported version: ${JSON.stringify(versionString(existing.highestSupportedVersion))}`,
        ),
      );
    return highest;
  }

  /** Upstream unregisterDriver. */
  async function unregisterDriver(name: string): Promise<void> {
    drivers.delete(name);
    cancelRetry(name);
    try {
      await deps.nim.uninstallCSIDriver(name);
    } catch (e) {
      throw new Error(csiLog(`Error uninstalling CSI driver: ${(e as Error).message}`));
    }
  }
  const unregisterAfter = async (name: string) => {
    await unregisterDriver(name).catch((e) =>
      log.error(csiLog(`registrationHandler.RegisterPlugin failed to unregister plugin due to previous error: ${(e as Error).message}`)),
    );
  };

  return {
    validatePlugin(pluginName, endpoint, versions) {
      log.info(csiLog(`Trying to validate a new CSI Driver with name: ${pluginName} endpoint: ${endpoint} versions: ${versions.join(",")}`));
      try {
        validateVersions("ValidatePlugin", pluginName, versions);
      } catch (e) {
        throw new Error(`validation failed for CSI Driver ${pluginName} at endpoint ${endpoint}: ${(e as Error).message}`);
      }
    },
    async registerPlugin(pluginName, endpoint, versions, pluginClientTimeoutMs) {
      log.info(csiLog(`Register new plugin with name: ${pluginName} at endpoint: ${endpoint}`));
      const highest = validateVersions("RegisterPlugin", pluginName, versions);
      const driver = { endpoint, highestSupportedVersion: highest };
      drivers.set(pluginName, driver);
      cancelRetry(pluginName);
      let info: Awaited<ReturnType<NodeGetInfo>>;
      try {
        info = await deps.nodeGetInfo(endpoint, pluginClientTimeoutMs ?? deps.timeoutMs ?? CSI_TIMEOUT_MS);
      } catch (e) {
        log.info(`Error calling CSI NodeGetInfo() ${kv({ err: (e as Error).message })}`);
        await unregisterAfter(pluginName);
        throw e;
      }
      try {
        await deps.nim.installCSIDriver(pluginName, info.nodeId, info.maxVolumesPerNode, info.accessibleTopology);
      } catch (e) {
        // A node ID that is empty is the driver's fault: refused as upstream refuses it.
        if (deps.installRetry && info.nodeId !== "") return retryInstall(pluginName, driver, info, e as Error);
        await unregisterAfter(pluginName);
        throw e;
      }
      log.info(`CSI driver registered ${kv({ driver: pluginName, nodeID: info.nodeId, maxVolumesPerNode: info.maxVolumesPerNode, endpoint })}`);
    },
    async deRegisterPlugin(pluginName, endpoint) {
      log.info(csiLog(`registrationHandler.DeRegisterPlugin request for plugin ${pluginName}, endpoint ${endpoint}`));
      await unregisterDriver(pluginName).catch((e) => log.error(csiLog(`registrationHandler.DeRegisterPlugin failed: ${(e as Error).message}`)));
    },
    drivers: () => drivers,
    stop() {
      stopped = true;
      for (const name of [...retries.keys()]) cancelRetry(name);
    },
  };
}
