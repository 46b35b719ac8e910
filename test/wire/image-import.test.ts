import { describe, expect, test } from "bun:test";
import type { Pod } from "../../src/pod/types.ts";
import { podUsesImage } from "../../src/wire/image-import.ts";

const pod = (spec: Record<string, unknown>) => ({ metadata: { name: "p", namespace: "default", uid: "u" }, spec }) as unknown as Pod;

describe("podUsesImage", () => {
  const names = new Set(["docker.io/library/busybox:latest", "registry.local/app:v1"]);
  test.each([
    [{ containers: [{ name: "a", image: "busybox" }] }, true],
    [{ containers: [{ name: "a", image: "docker.io/library/busybox:latest" }] }, true],
    [{ containers: [{ name: "a", image: "busybox:1.36" }] }, false],
    [{ initContainers: [{ name: "i", image: "registry.local/app:v1" }], containers: [{ name: "a", image: "other" }] }, true],
    [{ containers: [{ name: "a" }] }, false],
  ])("%j → %p", (spec, want) => expect(podUsesImage(pod(spec), names)).toBe(want));
});
