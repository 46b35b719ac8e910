// Compile-time checks (tsc) that the lifecycle plugs into eviction and CRI as they are written.
import { expect, test } from "bun:test";
import type { EvictionDeps, KillPodFunc } from "../../src/eviction/types.ts";
import type { PodLifecycle } from "../../src/pod/lifecycle-types.ts";
import { admitPod } from "../../src/eviction/admission.ts";
import type { PodAdmitHandler } from "../../src/pod/lifecycle-types.ts";
import type { createKubeRuntime } from "../../src/pod/kuberuntime/manager.ts";
import type { Runtime } from "../../src/pod/runtime.ts";

type Check<T extends true> = T;
// The lifecycle's killPod/activePods/isPodCleanedUp are eviction's deps as is.
export type KillPodFits = Check<PodLifecycle["killPod"] extends KillPodFunc ? true : false>;
export type ActivePodsFit = Check<PodLifecycle["activePods"] extends EvictionDeps["activePods"] ? true : false>;
export type CleanedUpFits = Check<PodLifecycle["isPodCleanedUp"] extends NonNullable<EvictionDeps["podCleanedUp"]> ? true : false>;
// CRI's runtime is our Runtime.
export type KubeRuntimeFits = Check<ReturnType<typeof createKubeRuntime> extends Runtime ? true : false>;

test("eviction's admission works as a pod admit handler", () => {
  const handler: PodAdmitHandler = (pod) => admitPod(pod, ["MemoryPressure"]);
  const be = { metadata: { name: "x", namespace: "default" }, spec: { containers: [{ name: "c" }] } };
  expect(handler(be, [])).toMatchObject({ admit: false, reason: "Evicted" });
});
