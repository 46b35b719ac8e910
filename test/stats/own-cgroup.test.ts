import { describe, expect, test } from "bun:test";
import { ownCgroupDirs, parseProcCgroup } from "../../src/stats/own-cgroup.ts";

const V1 = `12:pids:/system.slice/bunlet.service
11:cpu,cpuacct:/system.slice/bunlet.service
10:memory:/system.slice/bunlet.service
9:blkio:/system.slice
1:name=systemd:/system.slice/bunlet.service
0::/system.slice/bunlet.service
`;

describe("bunlet's own cgroup from /proc/self/cgroup", () => {
  test('parseProcCgroup: each v1 controller of a line, the v2 line under ""', () => {
    const m = parseProcCgroup(V1);
    expect(m.get("memory")).toBe("/system.slice/bunlet.service");
    expect(m.get("cpuacct")).toBe("/system.slice/bunlet.service");
    expect(m.get("cpu")).toBe("/system.slice/bunlet.service");
    expect(m.get("blkio")).toBe("/system.slice");
    expect(m.get("name=systemd")).toBe("/system.slice/bunlet.service");
    expect(m.get("")).toBe("/system.slice/bunlet.service");
  });

  test.each([
    [
      "v2: the unified path",
      "0::/system.slice/kubelet.service\n",
      2,
      {
        version: 2,
        memory: "/cg/system.slice/kubelet.service",
        cpu: "/cg/system.slice/kubelet.service",
        pids: "/cg/system.slice/kubelet.service",
        io: "/cg/system.slice/kubelet.service",
      },
    ],
    ["v2: the root cgroup is no container of its own", "0::/\n", 2, undefined],
    [
      "v1: per controller",
      V1,
      1,
      {
        version: 1,
        memory: "/cg/memory/system.slice/bunlet.service",
        cpu: "/cg/cpuacct/system.slice/bunlet.service",
        pids: "/cg/pids/system.slice/bunlet.service",
        io: "/cg/blkio/system.slice",
      },
    ],
    ["v1: in the root memory cgroup", "10:memory:/\n11:cpu,cpuacct:/x\n", 1, undefined],
    [
      "v1: a controller without a line falls back to the memory path",
      "10:memory:/a\n",
      1,
      { version: 1, memory: "/cg/memory/a", cpu: "/cg/cpuacct/a", pids: "/cg/pids/a", io: "/cg/blkio/a" },
    ],
    ["v1 host read as v2 (no unified line)", "10:memory:/a\n", 2, undefined],
  ] as const)("%s", (_name, text, version, want) => {
    expect(ownCgroupDirs(text, "/cg", version)).toEqual(want as never);
  });
});
