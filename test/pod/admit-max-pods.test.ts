import { describe, expect, test } from "bun:test";
import { admitMaxPods, maxPodsAdmitHandler } from "../../src/pod/admit-max-pods.ts";
import type { PodLike } from "../../src/pod/pod-like.ts";

describe("admitMaxPods", () => {
  test.each([
    ["empty node", 0, 110, true],
    ["one slot left", 109, 110, true],
    ["full node", 110, 110, false],
    ["over full (maxPods lowered)", 5, 3, false],
    ["maxPods 1, empty", 0, 1, true],
    ["maxPods 1, one running", 1, 1, false],
    ["maxPods 0 admits nothing", 0, 0, false],
  ] as const)("%s: used=%d capacity=%d → admit=%p", (_name, used, capacity, admit) => {
    expect(admitMaxPods(used, capacity).admit).toBe(admit);
  });

  test("rejection as upstream's InsufficientResourceError", () => {
    expect(admitMaxPods(3, 3)).toEqual({
      admit: false,
      reason: "OutOfpods",
      message: "Node didn't have enough resource: pods, requested: 1, used: 3, capacity: 3",
    });
  });

  test("the handler counts the other active pods", () => {
    const pod = (name: string): PodLike => ({ metadata: { name, namespace: "default", uid: name } }) as PodLike;
    const h = maxPodsAdmitHandler(2);
    expect(h(pod("c"), [pod("a")]).admit).toBe(true);
    expect(h(pod("c"), [pod("a"), pod("b")])).toMatchObject({ admit: false, reason: "OutOfpods" });
  });
});
