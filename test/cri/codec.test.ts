import { describe, expect, test } from "bun:test";
import { createCodec, entryKey, repeatedEntries } from "../../src/cri/codec.ts";

const codec = createCodec();
const container = (id: string, state = "CONTAINER_RUNNING") => ({
  id,
  podSandboxId: "s1",
  metadata: { name: "c", attempt: 0 },
  image: { image: "busybox" },
  imageRef: "sha256:1",
  state,
  createdAt: 1_700_000_000_000_000_000,
  labels: { "io.kubernetes.pod.uid": "u1" },
  annotations: { "io.kubernetes.container.restartCount": "0" },
});

describe("list replies decoded through the entry memo", () => {
  test("decode equals protobufjs's whole-message decode, for containers and sandboxes", () => {
    const fresh = createCodec();
    const containers = codec.encode("ListContainersResponse", { containers: [container("a"), container("b", "CONTAINER_EXITED")] });
    expect(codec.decode<object>("ListContainersResponse", containers)).toEqual(fresh.decode("ListContainersResponse", containers));
    expect(codec.decode<{ containers: { id: string; state: string }[] }>("ListContainersResponse", containers).containers.map((c) => [c.id, c.state])).toEqual([
      ["a", "CONTAINER_RUNNING"],
      ["b", "CONTAINER_EXITED"],
    ]);
    const sandboxes = codec.encode("ListPodSandboxResponse", {
      items: [{ id: "s1", state: "SANDBOX_READY", metadata: { name: "p", uid: "u1", namespace: "d", attempt: 0 }, labels: { a: "b" } }],
    });
    const d = codec.decode<{ items: { id: string; labels: Record<string, string>; annotations: Record<string, string> }[] }>(
      "ListPodSandboxResponse",
      sandboxes,
    );
    expect(d.items[0]).toMatchObject({ id: "s1", state: "SANDBOX_READY", labels: { a: "b" }, annotations: {} });
  });

  test("an empty reply is an empty list", () => {
    expect(codec.decode("ListContainersResponse", new Uint8Array())).toEqual({ containers: [] });
    expect(codec.decode("ListPodSandboxResponse", new Uint8Array())).toEqual({ items: [] });
  });

  test("an unchanged entry is the same (frozen) object; a changed one is decoded anew", () => {
    const c = createCodec();
    type Listed = { containers: { state: string; labels: Record<string, string> }[] };
    const one = c.decode<Listed>("ListContainersResponse", c.encode("ListContainersResponse", { containers: [container("a"), container("b")] }));
    const two = c.decode<Listed>(
      "ListContainersResponse",
      c.encode("ListContainersResponse", { containers: [container("a"), container("b", "CONTAINER_EXITED")] }),
    );
    expect(two.containers[0]).toBe(one.containers[0]!);
    expect(two.containers[1]).not.toBe(one.containers[1]!);
    expect(two.containers[1]!.state).toBe("CONTAINER_EXITED");
    expect(Object.isFrozen(two.containers[0])).toBe(true);
    expect(Object.isFrozen(two.containers[0]!.labels)).toBe(true);
    expect(() => {
      two.containers[0]!.labels.x = "y";
    }).toThrow(TypeError);
    // The list itself is the caller's: it may sort it.
    expect(Object.isFrozen(two.containers)).toBe(false);
  });

  test("entries leave the memo once absent from replies for 30 s, not after a burst of other replies", () => {
    let now = 0;
    const c = createCodec(undefined, { nowMs: () => now });
    const list = (ids: string[]) =>
      c.decode<{ containers: object[] }>("ListContainersResponse", c.encode("ListContainersResponse", { containers: ids.map((id) => container(id)) }));
    const first = list(["old"]);
    for (let r = 0; r < 50; r++) list([`burst${r}`]);
    expect(list(["old"]).containers[0]).toBe(first.containers[0]!);
    for (let s = 1; s <= 40; s += 5) {
      now = s * 1000;
      list(["other"]);
    }
    const again = list(["old"]);
    expect(again.containers[0]).toEqual(first.containers[0]!);
    expect(again.containers[0]).not.toBe(first.containers[0]!);
  });
});

describe("repeatedEntries", () => {
  test.each([
    ["empty", [], []],
    ["two entries", [0x0a, 1, 0x41, 0x0a, 0], [[0x41], []]],
  ] as const)("%s", (_, bytes, want) => {
    expect(repeatedEntries(new Uint8Array(bytes))?.map((b) => [...b])).toEqual(want.map((w) => [...w]));
  });
  test.each([
    ["another field", [0x12, 1, 0x41]],
    ["another wire type", [0x08, 1]],
    ["a length past the end", [0x0a, 5, 0x41]],
    ["a truncated varint", [0x0a, 0x80]],
  ] as const)("%s → undefined (decoded whole)", (_, bytes) => {
    expect(repeatedEntries(new Uint8Array(bytes))).toBeUndefined();
  });
});

describe("entryKey", () => {
  const codec2 = createCodec();
  const entry = (labels: Record<string, string>, createdAt = 1_700_000_000_000_000_000) =>
    repeatedEntries(codec2.encode("ListContainersResponse", { containers: [{ ...container("a"), createdAt, labels }] }))![0]!;
  test("the same for map entries in another order (containerd writes Go maps in random order), else different", () => {
    const a = entryKey(entry({ x: "1", y: "2", z: "3" }), [8, 9]);
    expect(a).toBeDefined();
    expect(entryKey(entry({ z: "3", x: "1", y: "2" }), [8, 9])).toBe(a!);
    expect(entryKey(entry({ x: "1", y: "2", z: "34" }), [8, 9])).not.toBe(a!);
    expect(entryKey(entry({ x: "1", y: "2" }), [8, 9])).not.toBe(a!);
    expect(entryKey(entry({ x: "1", y: "2", z: "3" }, 5), [8, 9])).not.toBe(a!);
  });
  test("any one byte changed outside the map fields changes the key (or makes the bytes no message)", () => {
    // Labels and annotations never change for an id (no CRI call changes them): they count by size.
    const e = repeatedEntries(codec2.encode("ListContainersResponse", { containers: [{ ...container("a"), labels: {}, annotations: {} }] }))![0]!;
    const keys = new Set<string>([entryKey(e, [8, 9])!]);
    let parsed = 0;
    for (let i = 0; i < e.length; i++) {
      const m = new Uint8Array(e);
      m[i] = m[i]! ^ 0x01;
      const k = entryKey(m, [8, 9]);
      if (k === undefined) continue;
      parsed++;
      expect(keys.has(k)).toBe(false);
      keys.add(k);
    }
    expect(parsed).toBeGreaterThan(e.length / 2);
  });
  test("bytes that are not a message: undefined", () => {
    expect(entryKey(new Uint8Array([0x0a, 9, 1]), [8])).toBeUndefined();
    expect(entryKey(new Uint8Array([0x0b]), [8])).toBeUndefined();
  });
  test("a reply whose labels come in another order hits the memo", () => {
    const c = createCodec();
    const reply = (labels: Record<string, string>) => c.encode("ListContainersResponse", { containers: [{ ...container("a"), labels }] });
    const one = c.decode<{ containers: object[] }>("ListContainersResponse", reply({ a: "1", b: "2" }));
    const two = c.decode<{ containers: object[] }>("ListContainersResponse", reply({ b: "2", a: "1" }));
    expect(two.containers[0]).toBe(one.containers[0]!);
  });
});

describe("user namespaces on the wire (upstream field numbers)", () => {
  test("NamespaceOption.userns_options (5) with IDMappings; Mount uidMappings (6) / gidMappings (7)", () => {
    const m = { hostId: 131072, containerId: 0, length: 65536 };
    const ns = { network: "POD", pid: "CONTAINER", ipc: "POD", usernsOptions: { mode: "POD", uids: [m], gids: [m] } };
    const bytes = codec.encode("NamespaceOption", ns);
    // field 5, wire type 2 (length-delimited)
    expect([...bytes]).toContain((5 << 3) | 2);
    expect(codec.decode<{ usernsOptions: unknown }>("NamespaceOption", bytes).usernsOptions).toEqual({ mode: "POD", uids: [m], gids: [m] });
    const mount = codec.decode<{ uidMappings: unknown[]; gidMappings: unknown[] }>(
      "Mount",
      codec.encode("Mount", { containerPath: "/d", hostPath: "/h", uidMappings: [m], gidMappings: [m] }),
    );
    expect([mount.uidMappings, mount.gidMappings]).toEqual([[m], [m]]);
  });

  test("StatusResponse.runtime_handlers (3): the handlers' user_namespaces feature; none from an older runtime", () => {
    const handlers = [{ name: "", features: { recursiveReadOnlyMounts: true, userNamespaces: true } }];
    const st = codec.decode<{ runtimeHandlers: unknown[] }>("StatusResponse", codec.encode("StatusResponse", { info: {}, runtimeHandlers: handlers }));
    expect(st.runtimeHandlers).toEqual(handlers);
    expect(codec.decode<{ runtimeHandlers: unknown[] }>("StatusResponse", codec.encode("StatusResponse", { info: {} })).runtimeHandlers).toEqual([]);
  });
});
