// core/v1 SecurityContext and PodSecurityContext, acted on as the kubelet does (src/pod/security; the
// semantic checks with upstream's messages are in validation/security.ts). windowsOptions is accepted
// and ignored, as a Linux kubelet ignores it (only kuberuntime's *_windows.go files read it).
import { z } from "zod";
import { id32 } from "./primitives.ts";
import { defaultOnly } from "./unsupported.ts";

const profileType = z.enum(["RuntimeDefault", "Unconfined", "Localhost"]);
const seccompProfile = z.strictObject({ type: profileType, localhostProfile: z.string().optional() });
const appArmorProfile = z.strictObject({ type: profileType, localhostProfile: z.string().optional() });
const seLinuxOptions = z.strictObject({ user: z.string().optional(), role: z.string().optional(), type: z.string().optional(), level: z.string().optional() });
const windowsOptions = z.strictObject({
  gmsaCredentialSpecName: z.string().optional(),
  gmsaCredentialSpec: z.string().optional(),
  runAsUserName: z.string().optional(),
  hostProcess: z.boolean().optional(),
});

export const securityContext = z.strictObject({
  runAsUser: id32.optional(),
  runAsGroup: id32.optional(),
  runAsNonRoot: z.boolean().optional(),
  privileged: z.boolean().optional(),
  readOnlyRootFilesystem: z.boolean().optional(),
  allowPrivilegeEscalation: z.boolean().optional(),
  capabilities: z.strictObject({ add: z.array(z.string()).optional(), drop: z.array(z.string()).optional() }).optional(),
  seccompProfile: seccompProfile.optional(),
  appArmorProfile: appArmorProfile.optional(),
  seLinuxOptions: seLinuxOptions.optional(),
  procMount: z.enum(["Default", "Unmasked"]).optional(),
  windowsOptions: windowsOptions.optional(),
});

export const podSecurityContext = z.strictObject({
  runAsUser: id32.optional(),
  runAsGroup: id32.optional(),
  runAsNonRoot: z.boolean().optional(),
  fsGroup: id32.optional(),
  fsGroupChangePolicy: z.enum(["OnRootMismatch", "Always"]).optional(),
  supplementalGroups: z.array(id32).optional(),
  // Merge (the default: the image's /etc/group memberships are added) is what the runtime does
  // unasked; Strict needs the CRI's supplemental_groups_policy, which bunlet does not send.
  supplementalGroupsPolicy: defaultOnly(
    z.enum(["Merge", "Strict"]).optional(),
    "SupplementalGroupsPolicy Strict is not implemented (the runtime always merges the image's groups)",
    (v) => v !== "Strict",
  ),
  // Read by the kubelet's SELinux mount-option relabelling only (volumemanager, SELinuxMount gates),
  // which bunlet does not do: volumes are relabelled by the runtime, as with Recursive.
  seLinuxChangePolicy: z.enum(["Recursive", "MountOption"]).optional(),
  sysctls: z.array(z.strictObject({ name: z.string(), value: z.string() })).optional(),
  seccompProfile: seccompProfile.optional(),
  appArmorProfile: appArmorProfile.optional(),
  seLinuxOptions: seLinuxOptions.optional(),
  windowsOptions: windowsOptions.optional(),
});
