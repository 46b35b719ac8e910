// A runtime handler's user namespace support from the runtime's Status (containerd 1.6 lists none).
import { describe, expect, test } from "bun:test";
import { handlerSupportsUserNamespaces, runtimeHandlerSupport } from "../../../src/pod/userns/runtime-handlers.ts";
import type { RuntimeHandler } from "../../../src/cri/types.ts";

const h = (name: string, userNamespaces: boolean): RuntimeHandler => ({ name, features: { recursiveReadOnlyMounts: true, userNamespaces } });

describe("runtime handlers", () => {
  test("no handlers reported (an older runtime): unsupported", () => {
    expect(handlerSupportsUserNamespaces([], "")).toBe(false);
  });
  test("the handler's user_namespaces feature", () => {
    const hs = [h("", true), h("runc", true), h("crun", false)];
    expect(handlerSupportsUserNamespaces(hs, "")).toBe(true);
    expect(handlerSupportsUserNamespaces(hs, "crun")).toBe(false);
    expect(handlerSupportsUserNamespaces([{ name: "", features: null }], "")).toBe(false);
  });
  test("an unlisted handler is an error", () => {
    expect(() => handlerSupportsUserNamespaces([h("", true)], "kata")).toThrow('the handler "kata" is not known');
  });
  test("asked from the runtime's status", async () => {
    const support = runtimeHandlerSupport({ status: async () => ({ status: null, info: {}, runtimeHandlers: [h("", true)] }) });
    expect(await support("")).toBe(true);
  });
});
