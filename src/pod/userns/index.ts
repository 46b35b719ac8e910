// User namespaces for pods with hostUsers: false (upstream pkg/kubelet/userns): the manager, the
// kubelet's id range and the runtime handlers' support.
export { DEFAULT_IDS_PER_POD, USERNS_UNIT_LENGTH } from "./allocator.ts";
export { getKubeletMappings, type KubeletMappings } from "./kubelet-mappings.ts";
export { MAPPINGS_FILE } from "./mappings-file.ts";
export { makeUserNsManager, type UserNsService } from "./make-manager.ts";
export { runtimeHandlerSupport } from "./runtime-handlers.ts";
export {
  createUsernsManager,
  handlerLacksUsernsMessage,
  USER_NAMESPACES_SUPPORT,
  type UsernsManager,
  type UsernsManagerOptions,
  type UsernsPod,
} from "./userns-manager.ts";
