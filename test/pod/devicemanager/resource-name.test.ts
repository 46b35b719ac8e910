import { describe, expect, test } from "bun:test";
import { isExtendedResourceName } from "../../../src/pod/devicemanager/resource-name.ts";
import { registrationError } from "../../../src/pod/devicemanager/registration.ts";

describe("isExtendedResourceName (upstream v1helper.IsExtendedResourceName)", () => {
  test.each([
    ["example.com/resource", true],
    ["nvidia.com/gpu", true],
    ["vendor.io/dev_1.a", true],
    ["cpu", false], // unprefixed: native
    ["memory", false],
    ["kubernetes.io/foo", false], // the kubernetes.io namespace is native
    ["node.kubernetes.io/foo", false],
    ["requests.example.com/x", false],
    ["Example.com/x", false], // the prefix is a DNS subdomain: lowercase
    ["example.com/", false],
    ["example.com/-bad", false],
    ["a/b/c", false],
    [`example.com/${"x".repeat(64)}`, false], // the name part is at most 63 characters
  ])("%s → %p", (name, want) => {
    expect(isExtendedResourceName(name)).toBe(want);
  });
});

describe("Register's checks (upstream plugin/v1beta1/server.go)", () => {
  test("a supported version and an extended resource name register", () => {
    expect(registrationError({ version: "v1beta1", endpoint: "dp.sock", resourceName: "example.com/resource" })).toBeUndefined();
  });
  test("another version is refused with upstream's text", () => {
    expect(registrationError({ version: "v1alpha1", endpoint: "dp.sock", resourceName: "example.com/resource" })).toBe(
      'requested API version "v1alpha1" is not supported by kubelet. Supported version is ["v1beta1"]',
    );
  });
  test("a native resource name is refused with upstream's text", () => {
    expect(registrationError({ version: "v1beta1", endpoint: "dp.sock", resourceName: "cpu" })).toBe('the ResourceName "cpu" is invalid');
  });
});
