import { describe, expect, test } from "bun:test";
import { devicesToAllocate, type AllocationInput } from "../../../src/pod/devicemanager/allocate.ts";

const R = "example.com/resource";
const base = (o: Partial<AllocationInput>): AllocationInput => ({
  podUID: "uid-1",
  containerName: "app",
  resource: R,
  required: 1,
  healthy: new Set(["Dev-1", "Dev-2"]),
  inUse: new Set(),
  ...o,
});

describe("devicesToAllocate (upstream ManagerImpl.devicesToAllocate)", () => {
  test("free devices in id order", () => {
    expect(devicesToAllocate(base({ required: 1 }))).toEqual(["Dev-1"]);
    expect(devicesToAllocate(base({ required: 1, inUse: new Set(["Dev-1"]) }))).toEqual(["Dev-2"]);
  });
  test("the plugin's preferred devices first, when free", () => {
    expect(devicesToAllocate(base({ required: 1, preferred: ["Dev-2"] }))).toEqual(["Dev-2"]);
    expect(devicesToAllocate(base({ required: 1, preferred: ["Dev-2"], inUse: new Set(["Dev-2"]) }))).toEqual(["Dev-1"]);
  });
  test("an init container's devices are reused first", () => {
    expect(devicesToAllocate(base({ required: 1, reusable: new Set(["Dev-2"]), inUse: new Set(["Dev-2"]) }))).toEqual(["Dev-2"]);
  });
  test("a container that holds its devices needs none", () => {
    expect(devicesToAllocate(base({ required: 1, held: new Set(["Dev-1"]), inUse: new Set(["Dev-1"]) }))).toEqual([]);
  });
  test.each([
    ["more than available", base({ required: 3 }), "requested number of devices unavailable for example.com/resource. Requested: 3, Available: 2"],
    [
      "all in use",
      base({ required: 1, inUse: new Set(["Dev-1", "Dev-2"]) }),
      "requested number of devices unavailable for example.com/resource. Requested: 1, Available: 0",
    ],
    ["never registered", base({ healthy: undefined }), "cannot allocate unregistered device example.com/resource"],
    ["none healthy", base({ healthy: new Set() }), "no healthy devices present; cannot allocate unhealthy devices example.com/resource"],
    [
      "held devices no longer healthy",
      base({ held: new Set(["Dev-9"]) }),
      "previously allocated devices are no longer healthy; cannot allocate unhealthy devices example.com/resource",
    ],
    [
      "a changed request",
      base({ required: 2, held: new Set(["Dev-1"]) }),
      'pod "uid-1" container "app" changed request for resource "example.com/resource" from 1 to 2',
    ],
  ])("%s: upstream's error", (_, input, message) => {
    expect(() => devicesToAllocate(input)).toThrow(message);
  });
});
