import { expect, test } from "bun:test";
import { reconstructVolume, volumeTearDownPlan, type PodVolume } from "../../../src/pod/volumemanager/reconstruct.ts";

const P = "/r/pods/u";
const vol = (plugin: string, name: string, volumeMode: "Filesystem" | "Block" = "Filesystem"): PodVolume => ({
  podUid: "u",
  volumeSpecName: name,
  volumePath: `${P}/${volumeMode === "Block" ? "volumeDevices" : "volumes"}/${plugin.replaceAll("/", "~")}/${name}`,
  pluginName: plugin,
  volumeMode,
});

test.each([
  ["a CSI volume with its vol_data.json goes to its driver", vol("kubernetes.io/csi", "pv"), true, "csi"],
  ["a CSI volume without it cannot be reconstructed", vol("kubernetes.io/csi", "pv"), false, "vol_data.json"],
  ["an emptyDir is unmounted", vol("kubernetes.io/empty-dir", "cache"), false, "unmount"],
  ["a secret is unmounted", vol("kubernetes.io/secret", "token"), false, "unmount"],
  ["a projected volume is unmounted", vol("kubernetes.io/projected", "kube-api-access"), false, "unmount"],
  ["a local PV is unmounted", vol("kubernetes.io/local-volume", "pv1"), false, "unmount"],
  ["a local Block PV's link is unmapped", vol("kubernetes.io/local-volume", "pv1", "Block"), false, "unmap"],
  ["a CSI Block PV goes to its driver (its vol_data.json is by its global map path)", vol("kubernetes.io/csi", "pv", "Block"), false, "csi"],
  ["another plugin's block volume cannot be reconstructed", vol("kubernetes.io/rbd", "pv", "Block"), true, "could not find block volume plugin"],
  ["a plugin bunlet lacks cannot be reconstructed", vol("example.com/nfs", "share"), false, "no volume plugin matched name: example.com/nfs"],
] as const)("reconstructVolume: %s", (_what, v, hasData, want) => {
  const r = reconstructVolume(v, hasData);
  if (r.ok) expect(r.kind).toBe(want as string as typeof r.kind);
  else expect(r.error).toContain(want);
});

test("volumeTearDownPlan: unmounts only below the volumes of unmount plugins, deepest first", () => {
  const volumes = [
    vol("kubernetes.io/empty-dir", "mem"),
    vol("kubernetes.io/empty-dir", "disk"),
    vol("kubernetes.io/local-volume", "pv1"),
    vol("kubernetes.io/csi", "pv"),
    vol("kubernetes.io/csi", "bare"),
    vol("example.com/nfs", "share"),
  ];
  const mounts = [
    `${P}/volumes/kubernetes.io~empty-dir/mem`,
    `${P}/volumes/kubernetes.io~empty-dir/mem/nested`,
    `${P}/volumes/kubernetes.io~local-volume/pv1`,
    `${P}/volumes/kubernetes.io~csi/pv/mount`,
    `${P}/volumes/kubernetes.io~csi/bare/mount`,
    `${P}/volumes/example.com~nfs/share`,
    `${P}/etc-hosts`,
  ];
  const plan = volumeTearDownPlan(volumes, (v) => v.volumeSpecName === "pv", mounts);
  expect(plan.csi).toBe(true);
  expect(plan.localVolumes).toBe(true);
  expect(plan.unmount).toEqual([
    `${P}/volumes/kubernetes.io~empty-dir/mem/nested`,
    `${P}/volumes/kubernetes.io~local-volume/pv1`,
    `${P}/volumes/kubernetes.io~empty-dir/mem`,
  ]);
  expect(plan.failed.map((f) => [f.volume.volumeSpecName, f.mounts])).toEqual([
    ["bare", [`${P}/volumes/kubernetes.io~csi/bare/mount`]],
    ["share", [`${P}/volumes/example.com~nfs/share`]],
  ]);
});

test("volumeTearDownPlan: nothing mounted, no CSI data: nothing to do", () => {
  const plan = volumeTearDownPlan([vol("kubernetes.io/empty-dir", "disk"), vol("kubernetes.io/configmap", "cfg")], () => false, []);
  expect(plan).toEqual({ csi: false, unmount: [], unmap: [], localVolumes: false, failed: [] });
});

test("volumeTearDownPlan: a local Block PV's link is removed (its global map file then goes), a CSI one goes to its driver", () => {
  const plan = volumeTearDownPlan([vol("kubernetes.io/local-volume", "blk", "Block"), vol("kubernetes.io/csi", "cblk", "Block")], () => false, []);
  expect(plan).toEqual({ csi: true, unmount: [], unmap: [`${P}/volumeDevices/kubernetes.io~local-volume/blk`], localVolumes: true, failed: [] });
});
