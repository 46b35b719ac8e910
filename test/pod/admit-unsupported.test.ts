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
    ["hostUsers", { hostUsers: false }, "spec.hostUsers: field not supported by bunlet"],
    ["an nfs volume", { volumes: [{ name: "v", nfs: { server: "s", path: "/" } }] }, "spec.volumes[0].nfs: field not supported by bunlet"],
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

  test("a pod with no usable containers still gets a stand-in", () => {
    const obj = { ...raw({}), spec: { nodeName: "n1", containers: "bogus", hostUsers: true } };
    const { errors } = decodePod(obj, "api", "", "api");
    const standIn = decodePod(unsupportedStandIn(obj, errors), "api", "", "api").pod;
    expect(standIn).toBeDefined();
    expect(unsupportedSpecAdmitHandler(standIn!, []).admit).toBe(false);
  });
});
