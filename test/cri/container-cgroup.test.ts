import { describe, expect, test } from "bun:test";
import { containerCgroupLeaves, isContainerCgroupLeaf } from "../../src/cri/container-cgroup.ts";

describe("container cgroup leaves", () => {
  const id = "0123456789abcdef";
  test("containerd's and CRI-O's names, both drivers", () => {
    expect(containerCgroupLeaves(id)).toEqual([id, `cri-containerd-${id}.scope`, `crio-${id}`, `crio-${id}.scope`]);
  });
  test.each<[string, boolean]>([
    [id, true],
    [`cri-containerd-${id}.scope`, true],
    [`crio-${id}`, true],
    [`crio-${id}.scope`, true],
    [`crio-conmon-${id}`, false],
    [`${id}0`, false],
    ["fedcba", false],
  ])("isContainerCgroupLeaf(%s) = %p", (leaf, want) => {
    expect(isContainerCgroupLeaf(leaf, id)).toBe(want);
  });
});
