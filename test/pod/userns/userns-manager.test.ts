// The user namespace manager over a temporary root dir: mode NODE or POD, the userns file written
// and read back by a new manager (a restart), upstream's errors, release and orphan cleanup.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defaultMappings } from "../../../src/pod/userns/kubelet-mappings.ts";
import { createUsernsManager, type UsernsManagerOptions } from "../../../src/pod/userns/userns-manager.ts";

const U = 65536;
let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "userns-"));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const manager = (o: Partial<UsernsManagerOptions> = {}) =>
  createUsernsManager({
    rootDir: root,
    featureEnabled: true,
    maxPods: 110,
    mappings: defaultMappings(U),
    handlerSupportsUserNamespaces: async () => true,
    randomInt: () => 0,
    ...o,
  });
const pod = (uid: string, hostUsers?: boolean) => ({ metadata: { uid }, spec: hostUsers === undefined ? {} : { hostUsers } });
const file = (uid: string) => join(root, "pods", uid, "userns");

describe("user namespace manager", () => {
  test("hostUsers unset or true: the node's user namespace, no file", async () => {
    const m = manager();
    expect(await m.getOrCreateUserNamespaceMappings(pod("a"), "")).toEqual({ mode: "NODE" });
    expect(await m.getOrCreateUserNamespaceMappings(pod("b", true), "")).toEqual({ mode: "NODE" });
    expect(existsSync(join(root, "pods"))).toBe(false);
  });

  test("hostUsers false: mode POD, 65536 ids from a slot, the file written; the same again on the next sync", async () => {
    const m = manager({ randomInt: () => 4 });
    const ns = await m.getOrCreateUserNamespaceMappings(pod("a", false), "");
    const mapping = { hostId: 5 * U, containerId: 0, length: U };
    expect(ns).toEqual({ mode: "POD", uids: [mapping], gids: [mapping] });
    expect(JSON.parse(readFileSync(file("a"), "utf8"))).toEqual({ uidMappings: [mapping], gidMappings: [mapping] });
    expect(await m.getOrCreateUserNamespaceMappings(pod("a", false), "")).toEqual(ns!);
    expect(m.allocated("a")).toBe(5 * U);
  });

  test("a restarted manager reads the files back: the pod keeps its range, others cannot take it", async () => {
    await manager({ randomInt: () => 7 }).getOrCreateUserNamespaceMappings(pod("a", false), "");
    const again = manager({ randomInt: () => 7 });
    expect(again.allocated("a")).toBe(8 * U);
    const b = await again.getOrCreateUserNamespaceMappings(pod("b", false), "");
    expect(b?.uids?.[0]?.hostId).toBe(9 * U);
    expect((await again.getOrCreateUserNamespaceMappings(pod("a", false), ""))?.uids?.[0]?.hostId).toBe(8 * U);
  });

  test("directories no pod UID can name are not pods", () => {
    mkdirSync(join(root, "pods", ".trash"), { recursive: true });
    writeFileSync(join(root, "pods", ".trash", "userns"), "{}");
    expect(manager().allocated(".trash")).toBeUndefined();
  });

  test("a corrupt file on disk stops the manager's creation with upstream's error", () => {
    mkdirSync(join(root, "pods", "bad"), { recursive: true });
    writeFileSync(file("bad"), "{}");
    expect(() => manager()).toThrow('record pod mappings for existing pod "bad": invalid user namespace configuration: no more than one mapping allowed.');
  });

  test("release frees the range and removes the file; orphans (not known, or gone from disk) are released", async () => {
    const m = manager();
    for (const uid of ["a", "b", "c"]) await m.getOrCreateUserNamespaceMappings(pod(uid, false), "");
    m.release("a");
    expect(existsSync(file("a"))).toBe(false);
    expect(m.allocated("a")).toBeUndefined();
    rmSync(join(root, "pods", "c"), { recursive: true });
    m.cleanupOrphanedPodUsernsAllocations(["c"]);
    expect(m.allocated("b")).toBeUndefined(); // on disk, not known
    expect(existsSync(file("b"))).toBe(false);
    expect(m.allocated("c")).toBeUndefined(); // known, but its directory is gone
  });

  test.each([
    ["", false, undefined, "can't set `spec.hostUsers: false`, runtime does not support user namespaces"],
    ["kata", false, undefined, 'can\'t set `spec.hostUsers: false`, RuntimeClass handler "kata" does not support user namespaces'],
    ["x", undefined, 'the handler "x" is not known', 'RuntimeClass handler "x" does not support user namespaces: the handler "x" is not known'],
  ])("handler %j without support: upstream's error, nothing allocated", async (handler, supported, thrown, msg) => {
    const m = manager({
      handlerSupportsUserNamespaces: async () => {
        if (thrown) throw new Error(thrown);
        return supported!;
      },
    });
    await expect(m.getOrCreateUserNamespaceMappings(pod("a", false), handler)).rejects.toThrow(msg);
    expect(m.allocated("a")).toBeUndefined();
    expect(existsSync(join(root, "pods"))).toBe(false);
  });

  test("the gate off: nothing for unset hostUsers, upstream's error when it is set", async () => {
    const m = manager({ featureEnabled: false, mappings: { firstId: 0, length: 0, source: "default" } });
    expect(await m.getOrCreateUserNamespaceMappings(pod("a"), "")).toBeUndefined();
    await expect(m.getOrCreateUserNamespaceMappings(pod("a", true), "")).rejects.toThrow(
      'the feature gate "UserNamespacesSupport" is disabled: can\'t set spec.HostUsers',
    );
  });
});
