import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createAutonomyStore } from "../../../src/pod/autonomy/index.ts";
import { createManualClock } from "../../../src/manual-clock.ts";
import { captureLog } from "../../support/log-capture.ts";

const pod = (uid: string, secret = "sec") => ({
  metadata: { name: `p-${uid}`, namespace: "ns", uid },
  spec: { containers: [{ name: "c", image: "i" }], volumes: [{ name: "v", secret: { secretName: secret } }] },
});
const secret = { metadata: { name: "sec", namespace: "ns" }, data: { k: "dg==" } };

let dir: string;
afterEach(() => rmSync(dir, { recursive: true, force: true }));
const open = (opts: { maxBytes?: number; secrets?: boolean } = {}) =>
  createAutonomyStore({ dir: join(dir, "autonomy"), maxBytes: opts.maxBytes ?? 1 << 20, secrets: opts.secrets ?? true, clock: createManualClock(1000) });
const TOKEN = { namespace: "ns", podUid: "u1", key: "\n3600", token: "t", expirationMs: 5000 };

/** A fresh directory and a loaded store holding pod u1, its secret and (unless `token` is false) a token. */
async function storeWithPod(token = true) {
  dir = mkdtempSync(join(tmpdir(), "autonomy-"));
  const a = open();
  await a.load();
  a.putPods([pod("u1")]);
  a.putObject("Secret", "ns", "sec", secret);
  if (token) a.putToken(TOKEN);
  return a;
}

describe("autonomy store", () => {
  test("what is stored is read back after a restart, private to root", async () => {
    const a = await storeWithPod();
    await a.flush();
    expect(statSync(a.dir).mode & 0o777).toBe(0o700);
    for (const f of readdirSync(a.dir)) expect(statSync(join(a.dir, f)).mode & 0o777).toBe(0o600);

    const b = open();
    await b.load();
    expect(b.pods()).toEqual([pod("u1")]);
    expect(b.object("Secret", "ns", "sec")).toEqual(secret);
    expect(b.token("u1", "\n3600")?.token).toBe("t");
  });

  test("a pod gone from the API server goes with its secret and tokens", async () => {
    const a = await storeWithPod();
    a.putPods([]);
    await a.flush();
    expect(readdirSync(a.dir)).toEqual([]);
    expect(a.usedBytes()).toBe(0);
  });

  test("a corrupt or foreign file is skipped, the rest loads", async () => {
    dir = mkdtempSync(join(tmpdir(), "autonomy-"));
    const a = open();
    await a.load();
    a.putPods([pod("u1"), pod("u2")]);
    await a.flush();
    writeFileSync(join(a.dir, "pod_u2.json"), "{ not json");
    writeFileSync(join(a.dir, "notes.txt"), "hello");
    writeFileSync(join(a.dir, "pod_u3.json"), JSON.stringify({ version: 1, kind: "Pod", savedAt: "", object: { metadata: {} } }));
    const b = open();
    await b.load();
    expect(b.pods()).toEqual([pod("u1")]);
  });

  test("a write past the bound is not made; the cache stays within it", async () => {
    dir = mkdtempSync(join(tmpdir(), "autonomy-"));
    const a = open({ maxBytes: 400 });
    await a.load();
    a.putPods([pod("u1"), pod("u2"), pod("u3")]);
    await a.flush();
    expect(a.usedBytes()).toBeLessThanOrEqual(400);
    expect(a.pods().length).toBeLessThan(3);
  });

  test("with secrets off, none is written and stored ones are removed at load", async () => {
    const a = await storeWithPod(false);
    await a.flush();
    const b = open({ secrets: false });
    await b.load();
    expect(b.object("Secret", "ns", "sec")).toBeUndefined();
    expect(readdirSync(b.dir)).toEqual(["pod_u1.json"]);
    b.putObject("Secret", "ns", "sec", secret);
    b.putToken(TOKEN);
    await b.flush();
    expect(readdirSync(b.dir)).toEqual(["pod_u1.json"]);
  });

  test("a claim goes with the last cached pod naming it, its PV with the last claim bound to it", async () => {
    dir = mkdtempSync(join(tmpdir(), "autonomy-"));
    const a = open();
    await a.load();
    const withClaim = (uid: string, volume: object) => ({ ...pod(uid), spec: { containers: [{ name: "c", image: "i" }], volumes: [volume] } });
    const db = withClaim("u1", { name: "data", persistentVolumeClaim: { claimName: "data-db" } });
    const scratch = {
      ...withClaim("u2", { name: "scratch", ephemeral: { volumeClaimTemplate: { spec: {} } } }),
      metadata: { name: "job", namespace: "ns", uid: "u2" },
    };
    a.putPods([db, scratch]);
    a.putObject("PersistentVolumeClaim", "ns", "data-db", claim("data-db", "pv-1"));
    a.putObject("PersistentVolume", "", "pv-1", volume("pv-1"));
    a.putObject("PersistentVolumeClaim", "ns", "job-scratch", claim("job-scratch", "pv-2"));
    a.putObject("PersistentVolume", "", "pv-2", volume("pv-2"));
    a.putPods([db, scratch]);
    await a.flush();
    expect(
      readdirSync(a.dir)
        .filter((f) => f.startsWith("persistent"))
        .sort(),
    ).toEqual([
      "persistentvolume_pv-1.json",
      "persistentvolume_pv-2.json",
      "persistentvolumeclaim_ns_data-db.json",
      "persistentvolumeclaim_ns_job-scratch.json",
    ]);

    a.putPods([db]);
    await a.flush();
    expect(
      readdirSync(a.dir)
        .filter((f) => f.startsWith("persistent"))
        .sort(),
    ).toEqual(["persistentvolume_pv-1.json", "persistentvolumeclaim_ns_data-db.json"]);
    const b = open();
    await b.load();
    expect(b.object("PersistentVolumeClaim", "ns", "data-db")).toEqual(claim("data-db", "pv-1"));
    expect(b.object("PersistentVolume", "", "pv-1")).toEqual(volume("pv-1"));
    b.putPods([]);
    await b.flush();
    expect(readdirSync(b.dir)).toEqual([]);
  });

  test("a CSIDriver goes with the last kept PV or inline volume of its driver, a VolumeAttachment with its PV; not found removes one", async () => {
    dir = mkdtempSync(join(tmpdir(), "autonomy-"));
    const a = open();
    await a.load();
    const withVolume = (uid: string, v: object) => ({ ...pod(uid), spec: { containers: [{ name: "c", image: "i" }], volumes: [v] } });
    const db = withVolume("u1", { name: "data", persistentVolumeClaim: { claimName: "data-db" } });
    const inline = withVolume("u2", { name: "scratch", csi: { driver: "inline.csi.example" } });
    a.putPods([db, inline]);
    a.putObject("PersistentVolumeClaim", "ns", "data-db", claim("data-db", "pv-1"));
    a.putObject("PersistentVolume", "", "pv-1", csiVolume("pv-1", "disk.csi.example"));
    a.putObject("CSIDriver", "", "disk.csi.example", csiDriver("disk.csi.example"));
    a.putObject("CSIDriver", "", "inline.csi.example", csiDriver("inline.csi.example"));
    a.putObject("VolumeAttachment", "", "csi-aaa", attachment("csi-aaa", "pv-1"));
    a.putObject("VolumeAttachment", "", "csi-bbb", attachment("csi-bbb", "pv-9"));
    a.putPods([db, inline]);
    await a.flush();
    const csiFiles = () =>
      readdirSync(a.dir)
        .filter((f) => f.startsWith("csidriver_") || f.startsWith("volumeattachment_"))
        .sort();
    // The attachment of a PV no kept claim is bound to goes at once.
    expect(csiFiles()).toEqual(["csidriver_disk.csi.example.json", "csidriver_inline.csi.example.json", "volumeattachment_csi-aaa.json"]);

    const b = open();
    await b.load();
    expect(b.object("CSIDriver", "", "disk.csi.example")).toEqual(csiDriver("disk.csi.example"));
    expect(b.object("VolumeAttachment", "", "csi-aaa")).toEqual(attachment("csi-aaa", "pv-1"));

    a.putPods([db]);
    await a.flush();
    expect(csiFiles()).toEqual(["csidriver_disk.csi.example.json", "volumeattachment_csi-aaa.json"]);
    a.removeObject("VolumeAttachment", "", "csi-aaa");
    await a.flush();
    expect(csiFiles()).toEqual(["csidriver_disk.csi.example.json"]);
    a.putObject("VolumeAttachment", "", "csi-aaa", attachment("csi-aaa", "pv-1"));
    a.putPods([]);
    await a.flush();
    expect(readdirSync(a.dir)).toEqual([]);
  });

  test("a Secret a kept CSI PV names for the node goes with the PV, not with the pods' own secrets", async () => {
    dir = mkdtempSync(join(tmpdir(), "autonomy-"));
    const a = open();
    await a.load();
    const db = {
      ...pod("u1"),
      spec: { containers: [{ name: "c", image: "i" }], volumes: [{ name: "data", persistentVolumeClaim: { claimName: "data-db" } }] },
    };
    const pv = csiVolume("pv-1", "disk.csi.example");
    const refs = { nodeStageSecretRef: { name: "stage", namespace: "storage" }, nodePublishSecretRef: { name: "pub", namespace: "ns" } };
    a.putPods([db]);
    a.putObject("PersistentVolumeClaim", "ns", "data-db", claim("data-db", "pv-1"));
    a.putObject("PersistentVolume", "", "pv-1", { ...pv, spec: { ...pv.spec, csi: { ...pv.spec.csi, ...refs } } });
    a.putObject("Secret", "storage", "stage", secret);
    a.putObject("Secret", "ns", "pub", secret);
    a.putPods([db]);
    await a.flush();
    const secretFiles = () =>
      readdirSync(a.dir)
        .filter((f) => f.startsWith("secret_"))
        .sort();
    expect(secretFiles()).toEqual(["secret_ns_pub.json", "secret_storage_stage.json"]);
    a.putPods([]);
    await a.flush();
    expect(readdirSync(a.dir)).toEqual([]);
  });

  test("a VolumeAttachment file without the PV it attaches is skipped with a line naming the file and field", async () => {
    dir = mkdtempSync(join(tmpdir(), "autonomy-"));
    const a = open();
    await a.load();
    await a.flush();
    const entry = (kind: string, object: unknown) => JSON.stringify({ version: 1, kind, savedAt: "", object });
    writeFileSync(join(a.dir, "volumeattachment_csi-aaa.json"), entry("VolumeAttachment", { metadata: { name: "csi-aaa" }, spec: { source: {} } }));
    const logs = captureLog();
    try {
      const b = open();
      await b.load();
      expect(b.object("VolumeAttachment", "", "csi-aaa")).toBeUndefined();
      expect(logs.text()).toContain("autonomy cache file volumeattachment_csi-aaa.json: object.spec.source.persistentVolumeName");
    } finally {
      logs.stop();
    }
  });

  test("a corrupt claim or PV file is skipped with a line naming the file and field", async () => {
    dir = mkdtempSync(join(tmpdir(), "autonomy-"));
    const a = open();
    await a.load();
    a.putObject("PersistentVolumeClaim", "ns", "data-db", claim("data-db", "pv-1"));
    a.putObject("PersistentVolume", "", "pv-1", volume("pv-1"));
    await a.flush();
    const entry = (kind: string, object: unknown) => JSON.stringify({ version: 1, kind, savedAt: "", object });
    writeFileSync(join(a.dir, "persistentvolumeclaim_ns_data-db.json"), entry("PersistentVolumeClaim", { ...claim("data-db", "pv-1"), status: { phase: 7 } }));
    writeFileSync(join(a.dir, "persistentvolume_pv-1.json"), entry("PersistentVolume", { ...volume("pv-1"), spec: { hostPath: { type: "Directory" } } }));
    writeFileSync(join(a.dir, "persistentvolume_pv-9.json"), "{ not json");
    const logs = captureLog();
    try {
      const b = open();
      await b.load();
      expect(b.object("PersistentVolumeClaim", "ns", "data-db")).toBeUndefined();
      expect(b.object("PersistentVolume", "", "pv-1")).toBeUndefined();
      expect(logs.text()).toContain("autonomy cache file persistentvolumeclaim_ns_data-db.json: object.status.phase");
      expect(logs.text()).toContain("autonomy cache file persistentvolume_pv-1.json: object.spec.hostPath.path");
      expect(logs.text()).toContain("autonomy cache file persistentvolume_pv-9.json: not JSON; skipping it");
    } finally {
      logs.stop();
    }
  });
});

function claim(name: string, volumeName: string) {
  return { metadata: { name, namespace: "ns", uid: `uid-${name}` }, spec: { volumeName }, status: { phase: "Bound" } };
}
function volume(name: string) {
  return { metadata: { name }, spec: { claimRef: { uid: "c" }, hostPath: { path: `/srv/${name}` } } };
}
function csiVolume(name: string, driver: string) {
  return { metadata: { name }, spec: { claimRef: { uid: "c" }, csi: { driver, volumeHandle: `h-${name}` } } };
}
function csiDriver(name: string) {
  return { metadata: { name }, spec: { attachRequired: true, podInfoOnMount: false } };
}
function attachment(name: string, pv: string) {
  return { metadata: { name }, spec: { attacher: "disk.csi.example", nodeName: "n1", source: { persistentVolumeName: pv } }, status: { attached: true } };
}
