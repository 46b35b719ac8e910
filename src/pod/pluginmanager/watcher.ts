// The plugin watcher (upstream pluginmanager/pluginwatcher/plugin_watcher.go): (re)creates the
// registration directory (0755), watches it and every directory under it (inotify through fs.watch),
// and feeds the desired state of world: a unix socket that appears is added (a new UUID each time it
// is created again), one that goes is removed. Names starting with "." and files that are not sockets
// are ignored. The initial walk registers the sockets already there, e.g. after a restart.
import { type FSWatcher, mkdirSync, readdirSync, statSync, type Stats, watch } from "node:fs";
import path from "node:path";
import { kv, log } from "../../log.ts";
import type { DesiredStateOfWorld } from "./cache.ts";

/** What the watcher does with a path that exists (upstream handleCreateEvent's decisions). */
export type CreateAction = "ignore-dot-file" | "traverse-dir" | "add-socket" | "ignore-non-socket";

export function createAction(name: string, st: Pick<Stats, "isDirectory" | "isSocket">): CreateAction {
  if (path.basename(name).startsWith(".")) return "ignore-dot-file";
  if (st.isDirectory()) return "traverse-dir";
  return st.isSocket() ? "add-socket" : "ignore-non-socket";
}

export interface PluginWatcher {
  start(): void;
  stop(): void;
}

export function createPluginWatcher(sockDir: string, dsw: DesiredStateOfWorld): PluginWatcher {
  const watchers = new Map<string, FSWatcher>();

  function handleCreate(p: string, st: Stats): void {
    const action = createAction(p, st);
    if (action === "traverse-dir") traverse(p);
    else if (action === "add-socket") {
      log.info(`Adding socket path or updating timestamp to desired state cache ${kv({ path: p })}`);
      dsw.addOrUpdatePlugin(p);
    }
  }
  function handleEvent(dir: string, name: string | null): void {
    if (!name) return;
    const p = path.join(dir, name);
    let st: Stats;
    try {
      st = statSync(p);
    } catch {
      // Gone: upstream's Remove event.
      if (dsw.pluginExists(p)) log.info(`Removing socket path from desired state cache ${kv({ path: p })}`);
      dsw.removePlugin(p);
      watchers.get(p)?.close();
      watchers.delete(p);
      return;
    }
    handleCreate(p, st);
  }
  function watchDir(dir: string): void {
    if (watchers.has(dir)) return;
    const w = watch(dir, (eventType, name) => {
      if (eventType === "rename") handleEvent(dir, name);
    });
    w.on("error", (e) => log.error(`FsWatcher received error ${kv({ path: dir, error: e.message })}`));
    watchers.set(dir, w);
  }
  function traverse(dir: string): void {
    watchDir(dir);
    for (const name of readdirSync(dir)) {
      const p = path.join(dir, name);
      try {
        handleCreate(p, statSync(p));
      } catch (e) {
        log.error(`Error accessing path ${kv({ path: p, error: (e as Error).message })}`);
      }
    }
  }

  return {
    start() {
      log.info(`Plugin Watcher Start ${kv({ path: sockDir })}`);
      try {
        mkdirSync(sockDir, { recursive: true, mode: 0o755 });
      } catch (e) {
        throw new Error(`error (re-)creating root ${sockDir}: ${(e as Error).message}`);
      }
      try {
        traverse(sockDir);
      } catch (e) {
        log.error(`Failed to traverse plugin socket path ${kv({ path: sockDir, error: (e as Error).message })}`);
      }
    },
    stop() {
      for (const w of watchers.values()) w.close();
      watchers.clear();
    },
  };
}
