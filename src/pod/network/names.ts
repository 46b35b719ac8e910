// A pod's hostname and domain (upstream GeneratePodHostNameAndDomain, truncatePodHostnameIfNeeded and
// GetNodenameForKernel): spec.hostnameOverride, else spec.hostname or the pod name, cut to 63
// characters; with spec.subdomain (and no override) the domain <subdomain>.<namespace>.svc.<clusterDomain>;
// with setHostnameAsFQDN the kernel hostname is the FQDN (at most 64 characters).
const HOSTNAME_MAX = 63;
const KERNEL_HOSTNAME_MAX = 64;

export interface NamedPod {
  metadata: { name: string; namespace?: string };
  spec: { hostname?: string; subdomain?: string; setHostnameAsFQDN?: boolean; hostnameOverride?: string };
}

/** upstream truncatePodHostnameIfNeeded. */
export function truncateHostname(name: string): string {
  return name.length <= HOSTNAME_MAX ? name : name.slice(0, HOSTNAME_MAX).replace(/[-.]+$/, "");
}

export function podHostnameAndDomain(pod: NamedPod, clusterDomain: string): { hostname: string; hostDomain: string } {
  if (pod.spec.hostnameOverride !== undefined) return { hostname: truncateHostname(pod.spec.hostnameOverride), hostDomain: "" };
  const hostname = truncateHostname(pod.spec.hostname || pod.metadata.name);
  const hostDomain = pod.spec.subdomain ? `${pod.spec.subdomain}.${pod.metadata.namespace ?? ""}.svc.${clusterDomain}` : "";
  return { hostname, hostDomain };
}

/** upstream GetNodenameForKernel: the UTS hostname; throws when the FQDN does not fit. */
export function kernelHostname(pod: NamedPod, clusterDomain: string): string {
  const { hostname, hostDomain } = podHostnameAndDomain(pod, clusterDomain);
  if (!pod.spec.setHostnameAsFQDN || !hostDomain) return hostname;
  const fqdn = `${hostname}.${hostDomain}`;
  if (fqdn.length > KERNEL_HOSTNAME_MAX)
    throw new Error(
      `failed to construct FQDN from pod hostname and cluster domain, FQDN ${fqdn} is too long (${KERNEL_HOSTNAME_MAX} characters is the max, ${fqdn.length} characters requested)`,
    );
  return fqdn;
}
