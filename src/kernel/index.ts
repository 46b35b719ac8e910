// Public surface of the kernel notification layer (for the agent and the eviction manager).
export { createNotifierHub, type HubRegistration, type HubSource, type NotifierHub, type NotifierHubOptions } from "./hub.ts";
export {
  armCgroupThreshold,
  MEMORY_USAGE_ATTRIBUTE,
  type CgroupThresholdNotifier,
  type CgroupThresholdOptions,
  type ThresholdEvent,
} from "./cgroup-threshold.ts";
export {
  createMemcgNotifierSet,
  createMemoryThresholdNotifier,
  memcgThresholdBytes,
  memoryStatsForSignal,
  thresholdAmountBytes,
  MemcgThresholdError,
  type MemcgNotifierEvent,
  type MemcgNotifierSet,
  type MemcgNotifierSetOptions,
  type MemcgTarget,
  type MemoryThresholdNotifier,
} from "./memory-threshold.ts";
export { startPsiNotifier, startPsiPolling, hasCapSysResource, type PsiEvent, type PsiNotifier, type PsiNotifierOptions } from "./psi.ts";
export { watchMemoryEvents, type MemoryEventsEvent, type MemoryEventsWatcher } from "./memory-events.ts";
export { watchKernfsFile, type KernfsWatch, type KernfsWatchOptions } from "./kernfs-watch.ts";
export { detectMemoryNotification, type MemoryNotificationSupport } from "./detect.ts";
export {
  startMemoryNotifiers,
  DEFAULT_PSI_TRIGGER,
  type MemoryNotifiers,
  type MemoryNotifiersOptions,
  type MemoryNotifiersLogger,
} from "./memory-notifiers.ts";
export * from "./cgroup-parse.ts";
export { Eventfd } from "./eventfd.ts";
export { Epoll } from "./epoll.ts";
export { DEFAULT_WORKING_SET_POLL } from "./working-set-schedule.ts";
export { NOTIFIER_THREAD_NICE, NOTIFIER_THREAD_RT_PRIORITY, applyThreadNice, boostThread, endBoost, newBoostSpec, type BoostSpec } from "./thread-priority.ts";
export {
  startWorkingSetWatch,
  type WorkingSetWatch,
  type WorkingSetWatchOptions,
  type WorkingSetCrossing,
  type WorkingSetTarget,
  type WorkingSetPollSettings,
} from "./working-set-watch.ts";
