// The systemd back end (cgroupDriver "systemd"; libcontainer's systemd managers, systemd/v1.go and v2.go):
// every level of a cgroup is first a transient slice unit systemd makes and owns (systemd-slices.ts, sent
// over systemd-dbus.ts), over the hierarchy's own back end for the rest. On v2 systemd makes the whole
// cgroup; on v1 the directories of the controllers systemd does not account (cpuset, …) are made and
// the files written as libcontainer's v1 manager does through fs. A running cgroup's new resources go
// to systemd first as runtime unit properties (libcontainer Set → setUnitProperties), so a
// daemon-reload, which makes systemd write its units' values again, keeps them. I/O only.
import { kv, log } from "../../log.ts";
import { systemdSliceName, type ResourceConfig } from "../cgroups-config.ts";
import type { SystemdUnits } from "../systemd-dbus.ts";
import { resourceProperties, transientSlice } from "../systemd-slices.ts";
import type { CgroupManager, RemovalFailure } from "./cgroup-manager.ts";

export function createSystemdCgroupManager(hierarchy: CgroupManager, units: SystemdUnits): CgroupManager {
  const cgroupVersion = hierarchy.version;
  const started = new Set<string>();

  /** Starts each level not started yet; the last one again when `cfg` is given (its resources). */
  async function startSlices(name: string[], cfg: ResourceConfig | undefined) {
    const systemdVersion = await units.version();
    for (let i = 1; i <= name.length; i++) {
      const level = name.slice(0, i);
      const last = i === name.length;
      const unit = systemdSliceName(level);
      if (started.has(unit) && (!last || !cfg)) continue;
      await units.startTransientUnit(transientSlice(level, last ? (cfg ?? {}) : {}, { systemdVersion, cgroupVersion }));
      started.add(unit);
    }
  }

  return {
    ...hierarchy,
    async create(name, cfg) {
      await startSlices(name, cfg);
      if (cgroupVersion === 1) await hierarchy.create(name, cfg);
    },
    async update(name, cfg, what) {
      const unit = systemdSliceName(name);
      try {
        await units.setUnitProperties(unit, resourceProperties(cfg, { systemdVersion: await units.version(), cgroupVersion }));
      } catch (e) {
        log.warn(`systemd unit properties not set ${kv({ unit, error: (e as Error).message })}`);
      }
      return hierarchy.writeResources(name, cfg, what);
    },
    async destroy(name) {
      const unit = systemdSliceName(name);
      // On v2 stopping the unit is the removal; on v1 it is the first step, before the directories
      // systemd did not make (controllers it does not account), removed as with cgroupfs.
      if (cgroupVersion === 2)
        try {
          await units.stopUnit(unit);
          started.delete(unit);
          return [];
        } catch (e) {
          return [{ error: (e as Error).message }];
        }
      const failures: RemovalFailure[] = [];
      await units.stopUnit(unit).catch((e: Error) => failures.push({ unit, error: e.message }));
      started.delete(unit);
      return [...failures, ...(await hierarchy.destroy(name))];
    },
    close() {
      units.close();
      hierarchy.close();
    },
  };
}
