// core/v1 Volume and its sources. bunlet mounts emptyDir, hostPath, persistentVolumeClaim (bound to a
// hostPath, local or CSI PV), generic ephemeral (the claim made for the pod), inline csi, downwardAPI, projected, secret and configMap
// volumes (src/pod/volumes, kuberuntime/empty-dir.ts); every other v1 volume source is
// accepted by the schema and refused by name (network and cloud volumes need attach/mount
// plugins bunlet does not have). The file ownership fields of AtomicWriteVolumeUserFields and the
// emptyDir mode of EmptyDirVolumeMode accept their default only.
import { z } from "zod";
import { csiVolumeSourceSchema } from "../volumes/csi/volume-spec.ts";
import { VOLUME_FIELD_PATHS } from "../volumes/downward-api.ts";
import { DNS_LABEL, fieldRef, fileMode, labelSelector, quantity, relativePath, resourceFieldRef, volumeFilePath } from "./primitives.ts";
import { defaultOnly, refusedWhenSet } from "./unsupported.ts";

/** AtomicWriteVolumeUserFields (user, defaultUser): file ownership bunlet's atomic writer does not set. */
const fileUser = defaultOnly(z.number().int().min(0).optional(), "per-file owners (AtomicWriteVolumeUserFields) are not implemented", (v) => v === undefined);

const downwardApiItem = z
  .strictObject({
    path: volumeFilePath,
    fieldRef: fieldRef(VOLUME_FIELD_PATHS).optional(),
    resourceFieldRef: resourceFieldRef.optional(),
    mode: fileMode.optional(),
    user: fileUser,
  })
  .superRefine((it, ctx) => {
    if (!!it.fieldRef === !!it.resourceFieldRef) ctx.addIssue({ code: "custom", message: "must specify exactly one of fieldRef, resourceFieldRef" });
    if (it.resourceFieldRef && !it.resourceFieldRef.containerName)
      ctx.addIssue({ code: "custom", path: ["resourceFieldRef", "containerName"], message: "required field is missing" });
  });
const downwardApiVolume = z.strictObject({ items: z.array(downwardApiItem).optional(), defaultMode: fileMode.optional(), defaultUser: fileUser });
/** core/v1 KeyToPath (secret/configMap items). */
const keyToPath = z.strictObject({ key: z.string().min(1), path: volumeFilePath, mode: fileMode.optional(), user: fileUser });
const secretVolume = z.strictObject({
  secretName: z.string().min(1),
  items: z.array(keyToPath).optional(),
  defaultMode: fileMode.optional(),
  optional: z.boolean().optional(),
  defaultUser: fileUser,
});
const configMapVolume = z.strictObject({
  name: z.string().default(""),
  items: z.array(keyToPath).optional(),
  defaultMode: fileMode.optional(),
  optional: z.boolean().optional(),
  defaultUser: fileUser,
});
const projectedObject = z.strictObject({ name: z.string().default(""), items: z.array(keyToPath).optional(), optional: z.boolean().optional() });
// core/v1 ClusterTrustBundleProjection, with upstream's validation (validateProjectionSources): one of
// name or signerName; labelSelector only with signerName (none there matches nothing).
const clusterTrustBundleProjection = z
  .strictObject({
    name: z.string().optional(),
    signerName: z.string().optional(),
    labelSelector: labelSelector.optional(),
    optional: z.boolean().optional(),
    path: volumeFilePath,
    user: fileUser,
  })
  .superRefine((c, ctx) => {
    if (c.name !== undefined && c.signerName !== undefined) ctx.addIssue({ code: "custom", message: "only one of name and signerName may be used" });
    else if (c.name !== undefined) {
      if (c.name === "") ctx.addIssue({ code: "custom", path: ["name"], message: "Required value: must be a valid object name" });
      if (c.labelSelector) ctx.addIssue({ code: "custom", path: ["labelSelector"], message: "labelSelector must be unset if name is specified" });
    } else if (c.signerName !== undefined) {
      if (c.signerName === "") ctx.addIssue({ code: "custom", path: ["signerName"], message: "Required value: must be a valid signer name" });
    } else ctx.addIssue({ code: "custom", message: "Required value: either name or signerName must be specified" });
  });
// upstream validation: expirationSeconds ≥ 10 min and < 2^32; audience optional.
const serviceAccountTokenProjection = z.strictObject({
  audience: z.string().optional(),
  expirationSeconds: z
    .number()
    .int()
    .min(600, "may not specify a duration less than 10 minutes")
    .max(2 ** 32 - 1)
    .default(3600),
  path: relativePath.pipe(z.string().min(1)),
  user: fileUser,
});
const volumeProjection = z
  .strictObject({
    downwardAPI: z.strictObject({ items: z.array(downwardApiItem).optional() }).optional(),
    secret: projectedObject.optional(),
    configMap: projectedObject.optional(),
    serviceAccountToken: serviceAccountTokenProjection.optional(),
    clusterTrustBundle: clusterTrustBundleProjection.optional(),
    // PodCertificateRequest: the kubelet generates a key, files a PodCertificateRequest and waits for
    // the signer; bunlet has no pod certificate manager.
    podCertificate: refusedWhenSet("podCertificate projections (PodCertificateRequest) are not implemented"),
  })
  .superRefine((src, ctx) => {
    if ([src.downwardAPI, src.secret, src.configMap, src.serviceAccountToken, src.clusterTrustBundle, src.podCertificate].filter(Boolean).length > 1)
      ctx.addIssue({ code: "custom", message: "may not specify more than 1 volume type per source" });
  });
const projectedVolume = z.strictObject({ sources: z.array(volumeProjection), defaultMode: fileMode.optional(), defaultUser: fileUser });

const emptyDirVolume = z.strictObject({
  medium: z.enum(["", "Memory"]).default(""),
  sizeLimit: quantity.optional(),
  // EmptyDirVolumeMode: 0777, the default, is what bunlet creates.
  mode: defaultOnly(
    z.number().int().min(0).max(0o1777).optional(),
    "an emptyDir mode (EmptyDirVolumeMode) other than the default 0777 is not implemented",
    (v) => v === undefined || v === 0o777,
  ),
});
const hostPathVolume = z.strictObject({
  // upstream validatePathNoBacksteps.
  path: z
    .string()
    .startsWith("/", "must be an absolute path")
    .refine((p) => !p.split("/").includes(".."), "must not contain '..'"),
  type: z.enum(["", "DirectoryOrCreate", "Directory", "FileOrCreate", "File", "Socket", "CharDevice", "BlockDevice"]).optional(),
});
// A claim in the pod's namespace; the PV behind it (hostPath or local) is resolved at volume set-up.
const persistentVolumeClaimVolume = z.strictObject({ claimName: z.string().min(1, "Required value"), readOnly: z.boolean().optional() });
/**
 * A generic ephemeral volume: the API server's ephemeral volume controller makes its claim from the
 * template; the kubelet only uses that claim (`<pod>-<volume>`), so the template is kept as it comes.
 */
const ephemeralVolume = z.strictObject({
  volumeClaimTemplate: z.looseObject({ metadata: z.looseObject({}).optional(), spec: z.looseObject({}) }),
});

const notImplemented = (what: string) => refusedWhenSet(`${what} volumes are not implemented`);
const cloud = (what: string) => refusedWhenSet(`${what} volumes are not implemented (in-tree cloud volumes are migrated to CSI upstream)`);
const removed = (what: string) => refusedWhenSet(`${what} volumes are removed or deprecated upstream and not implemented`);

/** The volume sources bunlet mounts. */
const SUPPORTED_VOLUME_SOURCES = [
  "emptyDir",
  "hostPath",
  "persistentVolumeClaim",
  "ephemeral",
  "csi",
  "downwardAPI",
  "projected",
  "secret",
  "configMap",
] as const;

const volumeSources = {
  emptyDir: emptyDirVolume.optional(),
  hostPath: hostPathVolume.optional(),
  downwardAPI: downwardApiVolume.optional(),
  projected: projectedVolume.optional(),
  secret: secretVolume.optional(),
  configMap: configMapVolume.optional(),
  persistentVolumeClaim: persistentVolumeClaimVolume.optional(),
  ephemeral: ephemeralVolume.optional(),
  csi: csiVolumeSourceSchema.optional(),
  image: refusedWhenSet("image volumes (the CRI's image mounts) are not implemented"),
  nfs: notImplemented("nfs"),
  iscsi: notImplemented("iscsi"),
  rbd: notImplemented("rbd"),
  cephfs: notImplemented("cephfs"),
  fc: notImplemented("fc"),
  portworxVolume: notImplemented("portworxVolume"),
  gitRepo: removed("gitRepo"),
  flexVolume: removed("flexVolume"),
  flocker: removed("flocker"),
  glusterfs: removed("glusterfs"),
  photonPersistentDisk: removed("photonPersistentDisk"),
  quobyte: removed("quobyte"),
  scaleIO: removed("scaleIO"),
  storageos: removed("storageos"),
  gcePersistentDisk: cloud("gcePersistentDisk"),
  awsElasticBlockStore: cloud("awsElasticBlockStore"),
  azureDisk: cloud("azureDisk"),
  azureFile: cloud("azureFile"),
  cinder: cloud("cinder"),
  vsphereVolume: cloud("vsphereVolume"),
};

export const volume = z.strictObject({ name: z.string().regex(DNS_LABEL, "must be a DNS label").max(63), ...volumeSources }).superRefine((v, ctx) => {
  const set = Object.keys(volumeSources).filter((k) => v[k as keyof typeof volumeSources] !== undefined);
  // upstream validateVolumeSource's messages; an unimplemented source already has its own refusal.
  if (set.length === 0) ctx.addIssue({ code: "custom", message: `must specify a volume type (bunlet mounts ${SUPPORTED_VOLUME_SOURCES.join(", ")})` });
  else if (set.length > 1) ctx.addIssue({ code: "custom", path: [set[1]!], message: "may not specify more than 1 volume type" });
});
