// The claims of a pod's persistentVolumeClaim volumes read as upstream's populator reads them: a GET of
// the claim in the pod's namespace, then — only for a bound claim — a GET of its PV (the two requests
// the Node authorizer grants a node for its pods); unused claims are not read.
import { describe, expect, test } from "bun:test";
import { ApiError } from "../../../src/kube/errors.ts";
import type { KubeClient } from "../../../src/kube/index.ts";
import { apiPersistentVolumeReader, resolveClaimedVolumes } from "../../../src/pod/apiobjects/persistent-volumes.ts";
import type { KubePod } from "../../../src/pod/kuberuntime/index.ts";

function fakeClient(objects: Record<string, unknown>) {
  const paths: string[] = [];
  const client = {
    async request(o: { path: string; schema?: { parse(v: unknown): unknown } }) {
      paths.push(o.path);
      const obj = objects[o.path];
      if (obj === undefined) throw new ApiError(404, "NotFound", `not found: ${o.path}`, "GET", o.path);
      return o.schema ? o.schema.parse(obj) : obj;
    },
  } as unknown as KubeClient;
  return { client, paths };
}

const pod = (volumes: object[], mounts: string[]): KubePod =>
  ({
    metadata: { name: "p", namespace: "team-a", uid: "u1" },
    spec: { containers: [{ name: "c", image: "i", volumeMounts: mounts.map((name) => ({ name, mountPath: `/${name}` })) }], volumes },
  }) as unknown as KubePod;

const PVC_PATH = "/api/v1/namespaces/team-a/persistentvolumeclaims/claim";
const PV_PATH = "/api/v1/persistentvolumes/pv-1";
const boundClaim = { metadata: { name: "claim", uid: "c-uid" }, spec: { volumeName: "pv-1" }, status: { phase: "Bound" } };

describe("resolveClaimedVolumes", () => {
  test("a bound claim: the claim in the pod's namespace, then its PV", async () => {
    const f = fakeClient({
      [PVC_PATH]: boundClaim,
      [PV_PATH]: { metadata: { name: "pv-1" }, spec: { claimRef: { uid: "c-uid" }, local: { path: "/mnt/d" } } },
    });
    const got = await resolveClaimedVolumes(
      apiPersistentVolumeReader(() => f.client),
      pod([{ name: "data", persistentVolumeClaim: { claimName: "claim" } }], ["data"]),
    );
    expect(f.paths).toEqual([PVC_PATH, PV_PATH]);
    expect(got.get("data")).toMatchObject({
      pvName: "pv-1",
      source: { plugin: "kubernetes.io/local-volume", local: { path: "/mnt/d" } },
      mountOptions: [],
      volumeMode: "Filesystem",
    });
  });

  test("a generic ephemeral volume: the claim <pod>-<volume>, used only when the pod is its controller", async () => {
    const path = "/api/v1/namespaces/team-a/persistentvolumeclaims/p-data";
    const claim = (owners: object[]) => ({ ...boundClaim, metadata: { name: "p-data", namespace: "team-a", uid: "c-uid", ownerReferences: owners } });
    const eph = pod([{ name: "data", ephemeral: { volumeClaimTemplate: { spec: {} } } }], ["data"]);
    const pvObj = { metadata: { name: "pv-1" }, spec: { claimRef: { uid: "c-uid" }, hostPath: { path: "/d" } } };
    const owned = fakeClient({ [path]: claim([{ kind: "Pod", name: "p", uid: "u1", controller: true }]), [PV_PATH]: pvObj });
    expect(
      await resolveClaimedVolumes(
        apiPersistentVolumeReader(() => owned.client),
        eph,
      ),
    ).toMatchObject(
      new Map([
        ["data", { pvName: "pv-1", source: { plugin: "kubernetes.io/host-path", hostPath: { path: "/d" } }, mountOptions: [], volumeMode: "Filesystem" }],
      ]),
    );
    expect(owned.paths).toEqual([path, PV_PATH]);
    for (const owners of [[], [{ kind: "Pod", name: "p", uid: "u1" }], [{ kind: "Pod", name: "p", uid: "another", controller: true }]]) {
      const f = fakeClient({ [path]: claim(owners), [PV_PATH]: pvObj });
      const got = (
        await resolveClaimedVolumes(
          apiPersistentVolumeReader(() => f.client),
          eph,
        )
      ).get("data") as Error;
      expect(got.message).toBe("PVC team-a/p-data was not created for pod team-a/p (pod is not owner)");
    }
  });

  test("a pending claim: its PV is not asked for; the error is upstream's", async () => {
    const f = fakeClient({ [PVC_PATH]: { metadata: { name: "claim", uid: "c-uid" }, spec: {}, status: { phase: "Pending" } } });
    const got = await resolveClaimedVolumes(
      apiPersistentVolumeReader(() => f.client),
      pod([{ name: "data", persistentVolumeClaim: { claimName: "claim" } }], ["data"]),
    );
    expect(f.paths).toEqual([PVC_PATH]);
    expect((got.get("data") as Error).message).toBe("error processing PVC team-a/claim: PVC is not bound");
  });

  test("a claim the API server refuses, an unused claim, no client", async () => {
    const f = fakeClient({});
    const vols = [
      { name: "data", persistentVolumeClaim: { claimName: "claim" } },
      { name: "spare", persistentVolumeClaim: { claimName: "spare" } },
    ];
    const got = await resolveClaimedVolumes(
      apiPersistentVolumeReader(() => f.client),
      pod(vols, ["data"]),
    );
    expect(f.paths).toEqual([PVC_PATH]);
    expect([...got.keys()]).toEqual(["data"]);
    expect((got.get("data") as Error).message).toBe(`error processing PVC team-a/claim: failed to fetch PVC from API server: not found: ${PVC_PATH}`);
    const none = await resolveClaimedVolumes(
      apiPersistentVolumeReader(() => undefined),
      pod(vols, ["data"]),
    );
    expect((none.get("data") as Error).message).toBe("error processing PVC team-a/claim: failed to fetch PVC from API server: no kubeClient defined");
  });

  test("a PV bound to another claim is refused", async () => {
    const f = fakeClient({ [PVC_PATH]: boundClaim, [PV_PATH]: { metadata: { name: "pv-1" }, spec: { claimRef: { uid: "old" }, hostPath: { path: "/srv" } } } });
    const got = await resolveClaimedVolumes(
      apiPersistentVolumeReader(() => f.client),
      pod([{ name: "data", persistentVolumeClaim: { claimName: "claim" } }], ["data"]),
    );
    expect((got.get("data") as Error).message).toBe(
      "error processing PVC team-a/claim: found PV object pv-1 but its pv.Spec.ClaimRef.UID old does not point to claim.UID c-uid",
    );
  });
});
