// Graceful node shutdown (upstream pkg/kubelet/nodeshutdown): the manager (pure sequencing over
// injected logind/pods/kill), the priority groups, and the real logind over D-Bus.
export { createShutdownManager, type InhibitLock, type Logind, type ShutdownManager, type ShutdownManagerDeps } from "./manager.ts";
export {
  groupByPriority,
  NODE_SHUTDOWN_MESSAGE,
  NODE_SHUTDOWN_NOT_ADMITTED_MESSAGE,
  NODE_SHUTDOWN_NOT_ADMITTED_REASON,
  NODE_SHUTDOWN_REASON,
  NODE_SHUTTING_DOWN_ERROR,
  periodRequestedSeconds,
  podShutdownGracePeriodSeconds,
  shutdownGroupsFromConfig,
  type ShutdownGracePeriodByPodPriority,
} from "./priority-groups.ts";
export { createLogindDBus, INHIBIT, type LogindOpts } from "./logind.ts";
export { logindOverrideContent, writeLogindOverride, LOGIND_CONFIG_DIRECTORY, KUBELET_LOGIND_CONF } from "./logind-conf.ts";
