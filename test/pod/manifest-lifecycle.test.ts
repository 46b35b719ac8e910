// The pod schema for the lifecycle/volumes fields (src/pod/types.ts): each is accepted as upstream
// validates it, or refused with the field path and the reason.
import { describe, expect, test } from "bun:test";
import { decodePod } from "../../src/pod/manifest.ts";

const pod = (container: Record<string, unknown>, spec: Record<string, unknown> = {}) => ({
  metadata: { name: "p" },
  spec: { containers: [{ name: "app", image: "busybox", ...container }], ...spec },
});
const errors = (obj: unknown) => decodePod(obj, "f.yaml").errors.map((e) => e.message);

describe("lifecycle hooks", () => {
  test.each([
    ["exec postStart", { postStart: { exec: { command: ["true"] } } }],
    ["httpGet preStop", { preStop: { httpGet: { path: "/q", port: 8080 } } }],
    ["sleep preStop", { preStop: { sleep: { seconds: 5 } } }],
  ])("accepts %s", (_n, lifecycle) => {
    expect(errors(pod({ lifecycle }))).toEqual([]);
  });

  test.each([
    ["tcpSocket", { preStop: { tcpSocket: { port: 80 } } }, "spec.containers[0].lifecycle.preStop.tcpSocket: tcpSocket is not supported as a lifecycle handler"],
    ["two handlers", { postStart: { exec: { command: ["a"] }, sleep: { seconds: 1 } } }, "must specify exactly one of exec, httpGet, sleep"],
    ["sleep 0", { preStop: { sleep: { seconds: 0 } } }, "lifecycle.preStop.sleep.seconds: must be greater than 0 and less than terminationGracePeriodSeconds (30)"],
    ["sleep beyond grace", { preStop: { sleep: { seconds: 31 } } }, "must be greater than 0 and less than terminationGracePeriodSeconds (30)"],
    ["stopSignal (not acted on)", { stopSignal: "SIGUSR1" }, "lifecycle.stopSignal: field not supported by bunlet"],
  ])("refuses %s", (_n, lifecycle, want) => {
    expect(errors(pod({ lifecycle })).join("\n")).toContain(want);
  });
});

describe("sidecar containers (initContainers[].restartPolicy)", () => {
  const withInit = (init: Record<string, unknown>, c: Record<string, unknown> = {}) => pod(c, { initContainers: [{ name: "i", image: "busybox", ...init }] });
  test("accepted: Always with probes and hooks", () => {
    expect(errors(withInit({ restartPolicy: "Always", startupProbe: { exec: { command: ["true"] } }, lifecycle: { preStop: { sleep: { seconds: 1 } } } }))).toEqual([]);
  });
  test.each([
    ["another value", withInit({ restartPolicy: "OnFailure" }), "spec.initContainers[0].restartPolicy"],
    ["on a regular container", withInit({}, { restartPolicy: "Always" }), "spec.containers[0].restartPolicy: may not be set for non-init containers"],
    ["probes on a regular init container", withInit({ readinessProbe: { exec: { command: ["true"] } } }), "spec.initContainers[0].readinessProbe: may not be set for init containers without restartPolicy=Always"],
    ["hooks on a regular init container", withInit({ lifecycle: { postStart: { exec: { command: ["true"] } } } }), "spec.initContainers[0].lifecycle: may not be set for init containers without restartPolicy=Always"],
  ])("refused: %s", (_n, obj, want) => {
    expect(errors(obj).join("\n")).toContain(want);
  });
});
