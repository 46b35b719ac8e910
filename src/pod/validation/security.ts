// Upstream's pod validation (pkg/apis/core/validation) for the security and namespace/DNS fields, with
// upstream's messages: seccomp and AppArmor profiles (fields and the deprecated annotations), sysctl
// names, procMount and hostUsers: false vs host namespaces, allowPrivilegeEscalation vs privileged/CAP_SYS_ADMIN, shareProcessNamespace vs
// hostPID, hostAliases, hostname/subdomain and dnsConfig.
import { isIP } from "node:net";
import type { Pod } from "../types.ts";
import { invalid, isDNS1123Label, isDNS1123Subdomain, type FieldError } from "./object-meta.ts";

const required = (field: string, msg: string): FieldError => ({ field, detail: `Required value: ${msg}` });
const forbidden = (field: string, msg: string): FieldError => ({ field, detail: `Forbidden: ${msg}` });
const duplicate = (field: string, value: string): FieldError => ({ field, detail: `Duplicate value: ${JSON.stringify(value)}` });

type Profile = { type: string; localhostProfile?: string };
type Container = Pod["spec"]["containers"][number];

/** upstream validateLocalDescendingPath. */
function descendingPathErrors(field: string, p: string): FieldError[] {
  if (p.startsWith("/")) return [invalid(field, p, "must be a relative path")];
  if (p.split("/").includes("..")) return [invalid(field, p, "must not contain '..'")];
  return [];
}

/** upstream validateSeccompProfileField. */
function seccompErrors(p: Profile | undefined, field: string): FieldError[] {
  if (!p) return [];
  if (p.type === "Localhost") {
    if (p.localhostProfile === undefined) return [required(`${field}.localhostProfile`, "must be set when seccomp type is Localhost")];
    return descendingPathErrors(`${field}.localhostProfile`, p.localhostProfile);
  }
  return p.localhostProfile !== undefined ? [invalid(`${field}.localhostProfile`, p.localhostProfile, "can only be set when seccomp type is Localhost")] : [];
}

/** upstream validateAppArmorProfileField. */
function appArmorErrors(p: Profile | undefined, field: string): FieldError[] {
  if (!p) return [];
  if (p.type === "Localhost") {
    if (p.localhostProfile === undefined) return [required(`${field}.localhostProfile`, "must be set when AppArmor type is Localhost")];
    if (p.localhostProfile.trim() === "") return [invalid(`${field}.localhostProfile`, p.localhostProfile, "must be a non-empty string")];
    if (p.localhostProfile.length > 4095) return [{ field: `${field}.localhostProfile`, detail: "Too long: must have at most 4095 bytes" }];
    return [];
  }
  return p.localhostProfile !== undefined ? [invalid(`${field}.localhostProfile`, p.localhostProfile, "can only be set when AppArmor type is Localhost")] : [];
}

const APPARMOR_PREFIX = "container.apparmor.security.beta.kubernetes.io/";

function annotationProfile(v: string): Profile | undefined {
  if (v === "runtime/default") return { type: "RuntimeDefault" };
  if (v === "unconfined") return { type: "Unconfined" };
  if (v.startsWith("localhost/")) return { type: "Localhost", localhostProfile: v.slice("localhost/".length) };
  return undefined;
}

/** upstream ValidateAppArmorPodAnnotations + validateAppArmorAnnotationsAndFieldsMatchOnCreate. */
function appArmorAnnotationErrors(pod: Pod, containers: { c: Container; path: string }[]): FieldError[] {
  const out: FieldError[] = [];
  for (const [k, v] of Object.entries(pod.metadata.annotations ?? {})) {
    if (!k.startsWith(APPARMOR_PREFIX)) continue;
    const field = `metadata.annotations[${k}]`;
    const name = k.slice(APPARMOR_PREFIX.length);
    const target = containers.find((x) => x.c.name === name);
    if (!target) out.push(invalid(field, name, "container not found"));
    const fromAnnotation = annotationProfile(v);
    if (!fromAnnotation) {
      out.push(invalid(field, v, `invalid AppArmor profile name: ${JSON.stringify(v)}`));
      continue;
    }
    const fieldProfile = target?.c.securityContext?.appArmorProfile ?? pod.spec.securityContext?.appArmorProfile;
    if (fieldProfile && (fieldProfile.type !== fromAnnotation.type || (fieldProfile.localhostProfile ?? "") !== (fromAnnotation.localhostProfile ?? "")))
      out.push(forbidden(`${target?.path ?? "spec"}.securityContext.appArmorProfile.type`, "apparmor type in annotation and field must match"));
  }
  return out;
}

const SYSCTL_NAME = /^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$/;

/** upstream validateSysctls (names; what the node allows is admission's, src/pod/security/sysctl.ts). */
function sysctlErrors(sysctls: { name: string }[] | undefined): FieldError[] {
  const out: FieldError[] = [];
  const seen = new Set<string>();
  (sysctls ?? []).forEach((s, i) => {
    const field = `spec.securityContext.sysctls[${i}].name`;
    if (!s.name) out.push(required(field, ""));
    else if (s.name.length > 253 || !SYSCTL_NAME.test(s.name))
      out.push(invalid(field, s.name, `must have at most 253 characters and match regex ${SYSCTL_NAME.source}`));
    else if (seen.has(s.name)) out.push(duplicate(field, s.name));
    seen.add(s.name);
  });
  return out;
}

/** upstream ValidateSecurityContext for one container. */
function containerSecurityErrors(c: Container, path: string, hostUsers: boolean): FieldError[] {
  const sc = c.securityContext;
  if (!sc) return [];
  const field = `${path}.securityContext`;
  const out = [...seccompErrors(sc.seccompProfile, `${field}.seccompProfile`), ...appArmorErrors(sc.appArmorProfile, `${field}.appArmorProfile`)];
  if (hostUsers && sc.procMount === "Unmasked") out.push(invalid(`${field}.procMount`, "Unmasked", "`hostUsers` must be false to use `Unmasked`"));
  if (sc.allowPrivilegeEscalation === false) {
    if (sc.privileged === true) out.push(invalid(field, "", "cannot set `allowPrivilegeEscalation` to false and `privileged` to true"));
    if (sc.capabilities?.add?.includes("CAP_SYS_ADMIN"))
      out.push(invalid(field, "", "cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN"));
  }
  return out;
}

/** upstream validatePodDNSConfig. */
function dnsConfigErrors(spec: Pod["spec"]): FieldError[] {
  const cfg = spec.dnsConfig;
  if (spec.dnsPolicy === "None") {
    if (!cfg) return [required("spec.dnsConfig", "must provide `dnsConfig` when `dnsPolicy` is None")];
    if (!cfg.nameservers?.length) return [required("spec.dnsConfig.nameservers", "must provide at least one DNS nameserver when `dnsPolicy` is None")];
  }
  if (!cfg) return [];
  const out: FieldError[] = [];
  const ns = cfg.nameservers ?? [];
  const searches = cfg.searches ?? [];
  if (ns.length > 3) out.push(invalid("spec.dnsConfig.nameservers", ns.join(","), "must not have more than 3 nameservers"));
  ns.forEach((ip, i) => {
    if (!isIP(ip)) out.push(invalid(`spec.dnsConfig.nameservers[${i}]`, ip, "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"));
  });
  if (searches.length > 32) out.push(invalid("spec.dnsConfig.searches", searches.join(","), "must not have more than 32 search paths"));
  if (searches.join(" ").length > 2048)
    out.push(invalid("spec.dnsConfig.searches", searches.join(","), "must not have more than 2048 characters (including spaces) in the search list"));
  searches.forEach((s, i) => {
    const d = s.endsWith(".") ? s.slice(0, -1) : s;
    for (const m of isDNS1123Subdomain(d)) out.push(invalid(`spec.dnsConfig.searches[${i}]`, d, m));
  });
  (cfg.options ?? []).forEach((o, i) => {
    if (!o.name) out.push(required(`spec.dnsConfig.options[${i}]`, "must not be empty"));
  });
  return out;
}

/** upstream validateHostAliases, hostname/subdomain labels, shareProcessNamespace vs hostPID. */
function namesErrors(spec: Pod["spec"]): FieldError[] {
  const out: FieldError[] = [];
  (spec.hostAliases ?? []).forEach((a, i) => {
    if (!isIP(a.ip)) out.push(invalid(`spec.hostAliases[${i}].ip`, a.ip, "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"));
    (a.hostnames ?? []).forEach((h, j) => {
      for (const m of isDNS1123Subdomain(h)) out.push(invalid(`spec.hostAliases[${i}].hostnames[${j}]`, h, m));
    });
  });
  for (const f of ["hostname", "subdomain"] as const) {
    const v = spec[f];
    if (v) for (const m of isDNS1123Label(v)) out.push(invalid(`spec.${f}`, v, m));
  }
  if (spec.shareProcessNamespace && spec.hostPID)
    out.push(invalid("spec.shareProcessNamespace", "true", "ShareProcessNamespace and HostPID cannot both be enabled"));
  return out;
}

/** upstream validateHostUsers: a pod with its own user namespace shares no other namespace with the host. */
function hostUsersErrors(spec: Pod["spec"]): FieldError[] {
  if (spec.hostUsers !== false) return [];
  const out: FieldError[] = [];
  // Upstream's field names, HostPID and HostIPC capitalized as its validation writes them.
  if (spec.hostNetwork) out.push(forbidden("spec.hostNetwork", "when `hostUsers` is false"));
  if (spec.hostPID) out.push(forbidden("spec.HostPID", "when `hostUsers` is false"));
  if (spec.hostIPC) out.push(forbidden("spec.HostIPC", "when `hostUsers` is false"));
  return out;
}

export function validateSecurity(pod: Pod): FieldError[] {
  const spec = pod.spec;
  const containers = [
    ...(spec.initContainers ?? []).map((c, i) => ({ c, path: `spec.initContainers[${i}]` })),
    ...spec.containers.map((c, i) => ({ c, path: `spec.containers[${i}]` })),
  ];
  const psc = spec.securityContext;
  return [
    ...seccompErrors(psc?.seccompProfile, "spec.securityContext.seccompProfile"),
    ...appArmorErrors(psc?.appArmorProfile, "spec.securityContext.appArmorProfile"),
    ...sysctlErrors(psc?.sysctls),
    ...hostUsersErrors(spec),
    ...containers.flatMap(({ c, path }) => containerSecurityErrors(c, path, spec.hostUsers !== false)),
    ...appArmorAnnotationErrors(pod, containers),
    ...dnsConfigErrors(spec),
    ...namesErrors(spec),
  ];
}
