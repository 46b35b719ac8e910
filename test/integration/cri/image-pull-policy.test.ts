// imagePullPolicy through kuberuntime on the private containerd, as upstream's EnsureImageExists:
// IfNotPresent and Never run a local image; Never with a missing image is ErrImageNeverPull with
// upstream's message; Always pulls even a present image — offline the pull fails (ErrImagePull) and
// the next sync inside the back-off is ImagePullBackOff without another pull.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createKubeRuntime } from "../../../src/pod/kuberuntime/manager.ts";
import type { KubePod } from "../../../src/pod/kuberuntime/types.ts";
import type { BackOff, Runtime } from "../../../src/pod/runtime.ts";
import { type TestContainerd, acquireContainerd, canRunContainerd, removeNodePods, tearDownPods } from "../../support/containerd.ts";
import { until } from "../../support/wait.ts";

const PID = process.pid;
const CGROUP_ROOT = `bunlet-ipp-${PID}`;
const LOG_ROOT = `/tmp/bunlet-ipp-logs-${PID}`;
const KUBELET_ROOT = `/tmp/bunlet-ipp-root-${PID}`;
const noBackOff: BackOff = { isInBackOff: () => false, next: () => {} };

function makePod(name: string, image: string, imagePullPolicy: string): KubePod {
  return {
    metadata: { name, namespace: "ipp-test", uid: `uid-${PID}-${name}` },
    spec: {
      hostNetwork: true,
      restartPolicy: "Always",
      terminationGracePeriodSeconds: 1,
      containers: [{ name: "main", image, imagePullPolicy, command: ["sleep", "3600"] }],
    },
  };
}

describe.skipIf(!canRunContainerd())("imagePullPolicy on containerd", () => {
  let ctd: TestContainerd;
  let rt: Runtime;
  let clockMs = Date.now();

  beforeAll(async () => {
    ctd = await acquireContainerd();
    rt = createKubeRuntime({ cri: ctd.cri, podLogsDir: LOG_ROOT, rootDir: KUBELET_ROOT, now: () => clockMs });
  }, 600_000);

  afterAll(async () => {
    await tearDownPods(ctd, () => removeNodePods(rt), CGROUP_ROOT, LOG_ROOT, KUBELET_ROOT);
  }, 120_000);

  const sync = async (pod: KubePod) =>
    rt.syncPod(pod, await rt.getPodStatus(pod.metadata.uid as string, pod.metadata.name, pod.metadata.namespace as string), noBackOff);

  test.each(["IfNotPresent", "Never"])("%s runs the local image", async (policy) => {
    const pod = makePod(`present-${policy.toLowerCase()}`, ctd.images.busybox, policy);
    const r = await sync(pod);
    expect(r.errors).toEqual([]);
    await until("container running", async () => {
      const st = await rt.getPodStatus(pod.metadata.uid as string, pod.metadata.name, pod.metadata.namespace as string);
      return st.containers.some((c) => c.name === "main" && c.state === "running");
    });
  });

  test("Never with a missing image: ErrImageNeverPull, upstream's message, no pull", async () => {
    const image = "bunlet.local/not-here:1";
    const r = await sync(makePod("never-missing", image, "Never"));
    expect(r.errors).toEqual([
      { container: "main", reason: "ErrImageNeverPull", message: `Container image "${image}" is not present with pull policy of Never` },
    ]);
  });

  test("Always with the image present: the offline pull fails (ErrImagePull), then ImagePullBackOff until the back-off expires", async () => {
    const pod = makePod("always-present", ctd.images.busybox, "Always");
    const first = await sync(pod);
    expect(first.errors).toHaveLength(1);
    expect(first.errors[0]!.reason).toBe("ErrImagePull");
    expect(first.errors[0]!.message.length).toBeGreaterThan(0);
    const second = await sync(pod);
    expect(second.errors).toEqual([{ container: "main", reason: "ImagePullBackOff", message: `Back-off pulling image "${ctd.images.busybox}"` }]);
    // Upstream's image back-off starts at 10 s: past it, the pull is tried (and fails) again.
    clockMs += 10_001;
    const third = await sync(pod);
    expect(third.errors[0]!.reason).toBe("ErrImagePull");
    // ...and the back-off doubled: 10 s later it is still backing off.
    clockMs += 10_001;
    expect((await sync(pod)).errors[0]!.reason).toBe("ImagePullBackOff");
    const st = await rt.getPodStatus(pod.metadata.uid as string, pod.metadata.name, pod.metadata.namespace as string);
    expect(st.containers).toEqual([]);
  }, 120_000);
});
