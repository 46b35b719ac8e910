// Whether a CRI runtime handler can run pods in their own user namespace (upstream kubelet_getters.go
// HandlerSupportsUserNamespaces over the handlers the runtime's Status reports). Runtimes older than
// CRI v1.30 (containerd 1.6) report none: then no handler supports them. containerd 2 reports
// user_namespaces true when its runc can make idmapped mounts (runc ≥ 1.2 on a kernel that has them).
import type { CriClient } from "../../cri/client.ts";
import type { RuntimeHandler } from "../../cri/types.ts";

/** The handler's user_namespaces feature; throws `the handler "x" is not known` for one the runtime does not list. */
export function handlerSupportsUserNamespaces(handlers: readonly RuntimeHandler[], runtimeHandler: string): boolean {
  if (handlers.length === 0) return false;
  const h = handlers.find((x) => x.name === runtimeHandler);
  if (!h) throw new Error(`the handler "${runtimeHandler}" is not known`);
  return h.features?.userNamespaces === true;
}

/** Asks the runtime's Status for its handlers at each call: only pods with hostUsers: false ask, once per sandbox. */
export function runtimeHandlerSupport(cri: Pick<CriClient, "status">): (runtimeHandler: string) => Promise<boolean> {
  return async (runtimeHandler) => handlerSupportsUserNamespaces((await cri.status(false)).runtimeHandlers ?? [], runtimeHandler);
}
