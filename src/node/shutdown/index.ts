// Graceful node shutdown (upstream pkg/kubelet/nodeshutdown): the manager (pure sequencing over
// injected logind/pods/kill), the priority groups, and the real logind over D-Bus.
export { createShutdownManager, type InhibitLock, type Logind, type ShutdownManager, type ShutdownManagerDeps } from "./manager.ts";
// The priority groups, their grace periods and the reasons and messages of pods stopped for a shutdown.
export * from "./priority-groups.ts";
export { createLogindDBus, INHIBIT, type LogindOpts } from "./logind.ts";
export { logindOverrideContent, writeLogindOverride, LOGIND_CONFIG_DIRECTORY, KUBELET_LOGIND_CONF } from "./logind-conf.ts";
