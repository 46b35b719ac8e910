// Pod volumes (src/pod/volumes/): hostPath type checks with upstream's errors, downward API values,
// the atomic writer and sub path safety — on a real filesystem under a temp directory.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, type Stats, statSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  checkHostPathType,
  downwardApiPayload,
  expandSubPathExpr,
  fieldRefValue,
  formatMap,
  prepareSubPath,
  resourceFieldRefValue,
  subPathError,
  timestampedDirName,
  writeAtomically,
  type DownwardContext,
} from "../../../src/pod/volumes/index.ts";

let dir: string;
let sock: Server;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "bunlet-vol-"));
  mkdirSync(join(dir, "d"));
  writeFileSync(join(dir, "f"), "x");
  sock = createServer();
  await new Promise<void>((r) => sock.listen(join(dir, "s.sock"), r));
});
afterAll(() => {
  sock.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("checkHostPathType (upstream checkType)", () => {
  test.each([
    ["", "missing", undefined],
    ["Directory", "d", undefined],
    ["Directory", "f", "hostPath type check failed: <p> is not a directory"],
    ["Directory", "missing", "hostPath type check failed: <p> is not a directory"],
    ["File", "f", undefined],
    ["File", "d", "hostPath type check failed: <p> is not a file"],
    ["File", "missing", "hostPath type check failed: <p> is not a file"],
    ["Socket", "s.sock", undefined],
    ["Socket", "f", "hostPath type check failed: <p> is not a socket file"],
    ["Socket", "missing", "hostPath type check failed: <p> is not a socket file"],
    ["CharDevice", "/dev/null", undefined],
    ["CharDevice", "f", "hostPath type check failed: <p> is not a character device"],
    ["BlockDevice", "f", "hostPath type check failed: <p> is not a block device"],
    ["BlockDevice", "/dev/null", "hostPath type check failed: <p> is not a block device"],
    ["DirectoryOrCreate", "d", undefined],
    ["DirectoryOrCreate", "f", "hostPath type check failed: <p> is not a directory"],
    ["FileOrCreate", "f", undefined],
    ["FileOrCreate", "d", "hostPath type check failed: <p> is not a file"],
    ["FileOrCreate", "s.sock", "hostPath type check failed: <p> is not a file"],
    ["Pipe", "d", "Pipe is an invalid volume type"],
  ])("%s on %s", (type, name, want) => {
    const p = name.startsWith("/") ? name : join(dir, name);
    const run = () => checkHostPathType(p, type as never);
    if (want) expect(run).toThrow(want.replace("<p>", p));
    else expect(run).not.toThrow();
  });

  test("DirectoryOrCreate creates a 0755 directory, FileOrCreate a 0644 file", () => {
    checkHostPathType(join(dir, "new/deep"), "DirectoryOrCreate");
    expect(statSync(join(dir, "new/deep")).isDirectory()).toBe(true);
    expect(statSync(join(dir, "new/deep")).mode & 0o777).toBe(0o755 & ~process.umask());
    checkHostPathType(join(dir, "new/file"), "FileOrCreate");
    expect(statSync(join(dir, "new/file")).isFile()).toBe(true);
  });

  test("BlockDevice on a block device (stat faked: no host has one to spare), and no other type on it", () => {
    const kinds = ["isDirectory", "isFile", "isSocket", "isCharacterDevice", "isBlockDevice"];
    const block = () => Object.fromEntries(kinds.map((k) => [k, () => k === "isBlockDevice"])) as unknown as Stats;
    expect(() => checkHostPathType("/dev/xvdb", "BlockDevice", block)).not.toThrow();
    expect(() => checkHostPathType("/dev/xvdb", "CharDevice", block)).toThrow("hostPath type check failed: /dev/xvdb is not a character device");
    expect(() => checkHostPathType("/dev/xvdb", "FileOrCreate", block)).toThrow("hostPath type check failed: /dev/xvdb is not a file");
  });
});

const ctx: DownwardContext = {
  pod: {
    metadata: { name: "web", namespace: "prod", uid: "u1", labels: { b: "2", a: "1" }, annotations: { note: 'say "hi"' } },
    spec: {
      nodeName: "n1",
      containers: [{ name: "app", resources: { limits: { cpu: "1500m", memory: "128Mi" }, requests: { cpu: "250m" } } }, { name: "bare" }],
    },
  },
  podIP: "10.1.2.3",
  hostIP: "192.168.0.9",
  nodeAllocatable: { cpuMilli: 2000, memoryBytes: 8 * 2 ** 30 },
};

describe("downward API values", () => {
  test.each([
    ["metadata.name", "web"],
    ["metadata.namespace", "prod"],
    ["metadata.uid", "u1"],
    ["metadata.labels", 'a="1"\nb="2"'],
    ["metadata.annotations", 'note="say \\"hi\\""'],
    ["metadata.labels['b']", "2"],
    ["metadata.labels['missing']", ""],
    ["spec.nodeName", "n1"],
    ["status.podIP", "10.1.2.3"],
    ["status.hostIP", "192.168.0.9"],
  ])("fieldRef %s", (path, want) => expect(fieldRefValue(path, ctx)).toBe(want));

  test("unsupported fieldPath", () => expect(() => fieldRefValue("spec.foo", ctx)).toThrow("unsupported fieldPath: spec.foo"));

  const [app, bare] = ctx.pod.spec.containers as [never, never];
  test.each([
    ["limits.cpu", undefined, app, "2"],
    ["limits.cpu", "1m", app, "1500"],
    ["requests.cpu", "1m", app, "250"],
    ["limits.memory", "1Mi", app, "128"],
    ["requests.memory", "1Mi", app, "128"],
    ["limits.memory", "1Gi", bare, "8"],
    ["limits.cpu", "1m", bare, "2000"],
    ["requests.cpu", undefined, bare, "0"],
    // An unset divisor as the API server writes it ("0"): 1, as upstream.
    ["limits.cpu", "0", app, "2"],
    ["limits.memory", "0", app, "134217728"],
  ])("resourceFieldRef %s / %s", (resource, divisor, c, want) => {
    expect(resourceFieldRefValue({ resource, divisor }, c, ctx)).toBe(want);
  });

  test("formatMap sorts keys", () => expect(formatMap({ z: "1", a: "2" })).toBe('a="2"\nz="1"'));

  test("downwardAPI payload with modes", () => {
    const p = downwardApiPayload(
      [
        { path: "labels", fieldRef: { fieldPath: "metadata.labels" } },
        { path: "cpu/limit", resourceFieldRef: { containerName: "app", resource: "limits.cpu", divisor: "1m" }, mode: 0o400 },
      ],
      0o600,
      ctx,
    );
    expect(p).toEqual({ labels: { content: 'a="1"\nb="2"', mode: 0o600 }, "cpu/limit": { content: "1500", mode: 0o400 } });
  });
});

describe("writeAtomically", () => {
  test("files appear through ..data; an update swaps it; unchanged content writes nothing", () => {
    const d = join(dir, "dapi");
    expect(writeAtomically(d, { name: { content: "web" }, "x/y": { content: "1", mode: 0o400 } })).toBe(true);
    expect(readFileSync(join(d, "name"), "utf8")).toBe("web");
    expect(readFileSync(join(d, "x/y"), "utf8")).toBe("1");
    expect(readlinkSync(join(d, "name"))).toBe("..data/name");
    const first = readlinkSync(join(d, "..data"));
    expect(writeAtomically(d, { name: { content: "web" }, "x/y": { content: "1" } })).toBe(false);
    expect(writeAtomically(d, { name: { content: "web2" } })).toBe(true);
    expect(readFileSync(join(d, "name"), "utf8")).toBe("web2");
    expect(existsSync(join(d, "x"))).toBe(false);
    expect(existsSync(join(d, first))).toBe(false);
  });
});

describe("sub paths", () => {
  test.each([
    ["a/b", undefined],
    ["/etc", "error SubPath `/etc` must not be an absolute path"],
    ["a/../../etc", "unable to provision SubPath `a/../../etc`: must not contain '..'"],
  ])("%s", (p, want) => expect(subPathError(p)).toBe(want));

  test("subPathExpr expands env; a missing var is an error", () => {
    expect(expandSubPathExpr("logs/$(POD)", { POD: "web" })).toBe("logs/web");
    expect(() => expandSubPathExpr("$(A)/$(B)", { A: "x" })).toThrow("missing value for B");
  });

  test("a missing sub path is created inside the volume; a symlink out of the volume is refused", () => {
    const vol = join(dir, "vol");
    mkdirSync(vol);
    expect(prepareSubPath(vol, "a/b", "m", "c")).toBe(join(vol, "a/b"));
    expect(statSync(join(vol, "a/b")).isDirectory()).toBe(true);
    symlinkSync("/etc", join(vol, "escape"));
    expect(() => prepareSubPath(vol, "escape", "m", "c")).toThrow('failed to prepare subPath for volumeMount "m" of container "c"');
    expect(() => prepareSubPath(vol, "escape/newdir", "m", "c")).toThrow('failed to create subPath directory for volumeMount "m" of container "c"');
    expect(existsSync("/etc/newdir")).toBe(false);
    symlinkSync("a", join(vol, "inside"));
    expect(prepareSubPath(vol, "inside", "m", "c")).toBe(join(vol, "a"));
  });
});

describe("atomic writer layout (upstream atomic_writer.go)", () => {
  test("..data → ..YYYY_MM_DD_hh_mm_ss.<digits>, bytes kept, top-level names link through ..data", () => {
    const d = join(dir, "layout");
    expect(timestampedDirName(new Date(Date.UTC(2026, 0, 2, 3, 4, 5)))).toMatch(/^\.\.2026_01_02_03_04_05\.\d+$/);
    writeAtomically(d, { "ca.crt": { content: new Uint8Array([0, 255, 10]) }, "dir/token": { content: "t", mode: 0o600 } });
    expect(readlinkSync(join(d, "..data"))).toMatch(/^\.\.\d{4}_\d\d_\d\d_\d\d_\d\d_\d\d\.\d+$/);
    expect([...readFileSync(join(d, "ca.crt"))]).toEqual([0, 255, 10]);
    expect(readlinkSync(join(d, "dir"))).toBe("..data/dir");
    expect(statSync(join(d, "dir/token")).mode & 0o777).toBe(0o600);
    expect(readdirSync(d).sort()).toEqual(["..data", readlinkSync(join(d, "..data")), "ca.crt", "dir"].sort());
  });
});
