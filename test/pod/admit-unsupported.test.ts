// API pods outside the supported subset: the stand-in the API source builds decodes, and the admit
// handler rejects it with upstream's PodFeatureUnsupported and a message naming each field.
import { describe, expect, test } from "bun:test";
import { decodePod } from "../../src/pod/manifest.ts";
import { POD_FEATURE_UNSUPPORTED, unsupportedSpecAdmitHandler, unsupportedStandIn } from "../../src/pod/admit-unsupported.ts";

const raw = (spec: Record<string, unknown>) => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name: "p", namespace: "default", uid: "u-1", labels: { a: "b" }, annotations: { x: "y" } },
  spec: { nodeName: "n1", restartPolicy: "Never", containers: [{ name: "c", image: "busybox", command: ["sh"] }], ...spec },
});

describe("unsupported API pod spec", () => {
  test("a supported pod is admitted", () => {
    const pod = decodePod(raw({}), "api", "", "api").pod!;
    expect(unsupportedSpecAdmitHandler(pod, [])).toEqual({ admit: true });
  });

  test.each([
    [
      "resource claims",
      { resourceClaims: [{ name: "gpu", resourceClaimName: "c" }] },
      'spec.resourceClaims: [{"name":"gpu","resourceClaimName":"c"}] is not supported by bunlet: resource claims (dynamic resource allocation) are not implemented',
    ],
    [
      "an nfs volume",
      { volumes: [{ name: "v", nfs: { server: "s", path: "/" } }] },
      'spec.volumes[0].nfs: {"server":"s","path":"/"} is not supported by bunlet: nfs volumes are not implemented',
    ],
    [
      "pod-level resources",
      { resources: { limits: { cpu: "1" } } },
      'spec.resources: {"limits":{"cpu":"1"}} is not supported by bunlet: pod-level resources (PodLevelResources) are not implemented',
    ],
  ])("%s: stand-in rejected Failed/PodFeatureUnsupported naming the field", (_n, spec, fragment) => {
    const obj = raw(spec);
    const { pod, errors } = decodePod(obj, "api", "", "api");
    expect(pod).toBeUndefined();
    const standIn = decodePod(unsupportedStandIn(obj, errors), "api", "", "api").pod!;
    expect(standIn.metadata).toMatchObject({ name: "p", namespace: "default", uid: "u-1", labels: { a: "b" } });
    expect(standIn.metadata.annotations?.x).toBe("y");
    expect(standIn.spec.containers.map((c) => [c.name, c.image, c.command])).toEqual([["c", "busybox", undefined]]);
    const verdict = unsupportedSpecAdmitHandler(standIn, []);
    expect(verdict.admit).toBe(false);
    expect(verdict.reason).toBe(POD_FEATURE_UNSUPPORTED);
    expect(verdict.message).toStartWith("Pod uses fields bunlet does not support: ");
    expect(verdict.message).toContain(fragment);
  });

  // An older kubelet ignores the fields of a newer API server (Go's JSON decoding drops them): the
  // API server validated them. In a file the same key is a typo, and refused (manifest.test.ts).
  test("a field newer than v1.37 in an API pod is left out and named; next to a refused value, the refusal stands", () => {
    const r = decodePod(raw({ someFutureField: { mode: "x" }, containers: [{ name: "c", image: "busybox", futureContainerField: 1 }] }), "api", "", "api");
    expect(r.errors).toEqual([]);
    expect(r.ignored).toEqual(["spec.containers[0].futureContainerField", "spec.someFutureField"]);
    expect(r.pod!.spec).not.toHaveProperty("someFutureField");
    expect(unsupportedSpecAdmitHandler(r.pod!, []).admit).toBe(true);
    const both = decodePod(raw({ someFutureField: true, resources: { limits: { cpu: "1" } } }), "api", "", "api");
    expect(both.errors.map((e) => e.field)).toEqual(["spec.resources"]);
    expect(decodePod(raw({ someFutureField: true }), "f.yaml").errors.map((e) => e.field)).toEqual(["spec.someFutureField"]);
  });

  test("a pod with no usable containers still gets a stand-in", () => {
    const obj = { ...raw({}), spec: { nodeName: "n1", containers: "bogus", hostUsers: true } };
    const { errors } = decodePod(obj, "api", "", "api");
    const standIn = decodePod(unsupportedStandIn(obj, errors), "api", "", "api").pod;
    expect(standIn).toBeDefined();
    expect(unsupportedSpecAdmitHandler(standIn!, []).admit).toBe(false);
  });
});
