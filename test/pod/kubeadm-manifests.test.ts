// kubeadm's four control-plane manifests (test/fixtures/kubeadm) decode and validate as bunlet reads
// a static pod file; the e2e test (test/e2e/kubeadm-control-plane.test.ts) runs them.
import { describe, expect, test } from "bun:test";
import { parse } from "yaml";
import { decodeManifests } from "../../src/pod/manifest.ts";
import { KUBEADM_COMPONENTS, kubeadmManifest, withHostPathsUnder } from "../support/kubeadm.ts";

describe.each(KUBEADM_COMPONENTS)("%s", (component) => {
  test("is accepted with kubeadm's fields", () => {
    const r = decodeManifests(kubeadmManifest(component), `${component}.yaml`);
    expect(r.errors.map((e) => e.message)).toEqual([]);
    const pod = r.pods[0]!;
    expect(pod.metadata.namespace).toBe("kube-system");
    expect(pod.spec.hostNetwork).toBe(true);
    expect(pod.spec.priorityClassName).toBe("system-node-critical");
    expect(pod.spec.priority).toBe(2000001000);
    const c = pod.spec.containers[0]!;
    expect(c.command![0]).toBe(component);
    expect(c.image).toBe(`bunlet.local/${component}:1`);
    expect(c.imagePullPolicy).toBe("IfNotPresent");
    expect(c.startupProbe?.httpGet).toBeDefined();
    expect(c.livenessProbe?.failureThreshold).toBe(8);
  });

  test("moving hostPaths under a root changes only hostPath.path", () => {
    type Raw = { spec: { volumes: { hostPath: { path: string } }[]; containers: { startupProbe: { httpGet: { path: string } } }[] } };
    const before = parse(kubeadmManifest(component)) as Raw;
    const after = parse(withHostPathsUnder(kubeadmManifest(component), "/tmp/root")) as Raw;
    expect(after.spec.volumes.map((v) => v.hostPath.path)).toEqual(before.spec.volumes.map((v) => `/tmp/root${v.hostPath.path}`));
    for (const v of [...before.spec.volumes, ...after.spec.volumes]) v.hostPath.path = "";
    expect(after).toEqual(before);
    // Probe paths (also `path:` keys) are untouched.
    expect(after.spec.containers[0]!.startupProbe.httpGet.path).toMatch(/^\/(livez|healthz|health)/);
  });
});

test("examples/manifests/control-plane decodes without errors; priority comes from the class name", async () => {
  const { readStaticPods } = await import("../../src/pod/sources/file.ts");
  const r = await readStaticPods(new URL("../../examples/manifests/control-plane", import.meta.url).pathname, "node1");
  expect(r.errors).toEqual([]);
  expect(r.pods.map((p) => p.metadata.name).sort()).toEqual(KUBEADM_COMPONENTS.map((c) => `${c}-node1`));
  for (const p of r.pods) {
    expect(p.spec.priority).toBe(2000001000);
    expect(p.spec.securityContext?.seccompProfile?.type).toBe("RuntimeDefault");
  }
});
