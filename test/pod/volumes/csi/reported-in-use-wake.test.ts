// A pod whose attachable CSI volume waits for a node status to list it in volumesInUse is synced again
// as soon as one does, not at its doubling volume back-off: the CSI volume manager hands the waiting
// pods to the pod lifecycle's syncPodsNow, as the agent wires them.
import { afterEach, beforeEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { volumeRetryDelayMs } from "../../../../src/pod/kuberuntime/pod-volumes.ts";
import { createPodLifecycle } from "../../../../src/pod/lifecycle.ts";
import type { PodLifecycle } from "../../../../src/pod/lifecycle-types.ts";
import { attachmentName } from "../../../../src/pod/volumes/csi/csi-util.ts";
import { persistentCSIVolumeSpec } from "../../../../src/pod/volumes/csi/volume-spec.ts";
import { createSettlingClock } from "../../../support/settling-clock.ts";
import { recordingCSIVolumeManager } from "../../../support/fake-csi-node-client.ts";
import { createFakeRuntime, makePod } from "../../fake-runtime.ts";

const UNIQUE = "kubernetes.io/csi/drv^vol-1";
const VA = attachmentName("vol-1", "drv", "n1");
const pvSpec = persistentCSIVolumeSpec("pv-a", { driver: "drv", volumeHandle: "vol-1" }, { accessModes: ["ReadWriteOnce"], mountOptions: [] }, false);
const objects = {
  "/apis/storage.k8s.io/v1/csidrivers/drv": { metadata: { name: "drv" }, spec: { attachRequired: true } },
  [`/apis/storage.k8s.io/v1/volumeattachments/${VA}`]: { metadata: { name: VA }, status: { attached: true } },
};

let root = "";
let lc: PodLifecycle | undefined;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "reported-in-use-wake-"));
});
afterEach(async () => {
  await lc?.stop();
  lc = undefined;
  rmSync(root, { recursive: true, force: true });
});

/** A lifecycle whose runtime sets up the pod's CSI PV first, failing with the volume back-off as kuberuntime does. */
async function setup() {
  const clock = createSettlingClock();
  const rt = createFakeRuntime(clock.now);
  const csi = recordingCSIVolumeManager({
    rootDir: root,
    caps: [],
    objects: () => objects,
    controllerAttachDetach: true,
    onVolumesReportedInUse: (uids) => lc?.syncPodsNow((p) => uids.has(p.metadata.uid)),
  });
  let failures = 0;
  const syncPod = rt.syncPod.bind(rt);
  rt.syncPod = async (pod, status, backOff, options) => {
    try {
      await csi.m.setUp({ pod: { metadata: pod.metadata, spec: {} }, spec: pvSpec });
    } catch {
      failures++;
      return { errors: [{ container: "app", reason: "ContainerCreating", message: "" }], retryAfterMs: volumeRetryDelayMs(failures) };
    }
    return syncPod(pod, status, backOff, options);
  };
  lc = createPodLifecycle({ runtime: rt, clock, config: { nodeName: "n1", syncFrequencyMs: 60_000, errorRetryMs: 10_000 } });
  await lc.start();
  const settle = async (ms: number) => {
    await clock.advance(ms);
    await lc!.whenIdle();
    await clock.advance(0);
    await lc!.whenIdle();
  };
  return { rt, csi, settle, failures: () => failures };
}

test("a volume reported in use: the waiting pod's volume set-up is tried again at once, not after its back-off", async () => {
  const { rt, csi, settle, failures } = await setup();
  lc!.handleUpdate({ op: "SET", pods: [makePod({ name: "db", uid: "u1" })], source: "file" });
  await settle(0);
  await settle(volumeRetryDelayMs(1));
  await settle(volumeRetryDelayMs(2));
  expect(failures()).toBe(3); // the next try is 2 s away
  expect(csi.calls).toEqual([]);

  csi.m.markVolumesReportedInUse([UNIQUE]);
  await settle(0);
  expect(csi.calls.map((c) => c.method)).toEqual(["publish"]);
  expect(failures()).toBe(3);
  expect(rt.calls).toContain("start db/app#0");
});
