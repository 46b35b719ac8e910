// The manager as the agent starts it: the kubelet's range looked up once, the pods' files read back
// before any call is answered, a failure at start named as upstream's kubelet names it.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { makeUserNsManager } from "../../../src/pod/userns/make-manager.ts";
import type { MappingsHost } from "../../../src/pod/userns/kubelet-mappings.ts";

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "userns-make-"));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const subids = (out: string): MappingsHost => ({ userExists: () => true, lookPath: () => "/usr/bin/getsubids", output: async () => out });
const make = (mappingsHost: MappingsHost, featureEnabled = true) =>
  makeUserNsManager({ rootDir: root, featureEnabled, maxPods: 2, handlerSupportsUserNamespaces: async () => true, randomInt: () => 0, mappingsHost });

describe("makeUserNsManager", () => {
  test("the range from getsubids; a pod's file on disk is its range before any call", async () => {
    mkdirSync(join(root, "pods", "old"), { recursive: true });
    const m = { hostId: 1 << 20, containerId: 0, length: 65536 };
    writeFileSync(join(root, "pods", "old", "userns"), JSON.stringify({ uidMappings: [m], gidMappings: [m] }));
    const svc = make(subids(`0: kubelet ${1 << 20} ${2 * 65536}\n`));
    await svc.start();
    const ns = await svc.getOrCreateUserNamespaceMappings({ metadata: { uid: "new" }, spec: { hostUsers: false } }, "");
    expect(ns?.uids?.[0]?.hostId).toBe((1 << 20) + 65536); // slot 0 is old's
  });

  test("a range too small for maxPods fails the start, named as upstream's", async () => {
    await expect(make(subids("0: kubelet 65536 65536\n")).start()).rejects.toThrow(
      "create user namespace manager: kubelet user assigned IDs are not enough to support 2 pods",
    );
  });

  test("the gate off: getsubids is not asked", async () => {
    const notAsked = () => {
      throw new Error("getsubids asked");
    };
    const svc = make({ ...subids(""), userExists: notAsked, lookPath: notAsked }, false);
    await svc.start();
    expect(await svc.getOrCreateUserNamespaceMappings({ metadata: { uid: "a" }, spec: {} }, "")).toBeUndefined();
  });
});
