// The kubelet's service environment variables (upstream pkg/kubelet/envvars FromServices and
// kubelet_pods.go getServiceEnvVarMap): for each service with a cluster IP, <NAME>_SERVICE_HOST,
// <NAME>_SERVICE_PORT (the first port), <NAME>_SERVICE_PORT_<PORTNAME> per named port, and Docker's
// link variables (<NAME>_PORT, <NAME>_PORT_<port>_<PROTO>[_PROTO|_PORT|_ADDR]); the services are
// those of the pod's namespace when enableServiceLinks, and always the master `kubernetes` service of
// `default`. Pure: the services come from the service lister.

/** The fields of a v1 Service the variables are made from. */
export interface ServiceLike {
  metadata: { name: string; namespace?: string };
  spec?: { clusterIP?: string; ports?: { name?: string; port: number; protocol?: string }[] };
}

export interface EnvVar {
  name: string;
  value: string;
}

/** upstream masterServices: their variables reach every pod, whatever its enableServiceLinks. */
const MASTER_SERVICES = new Set(["kubernetes"]);
const NAMESPACE_DEFAULT = "default";

/** upstream v1helper.IsServiceIPSet: a cluster IP that is neither empty nor "None" (headless). */
export const isServiceIPSet = (s: ServiceLike) => !!s.spec?.clusterIP && s.spec.clusterIP !== "None";

/** upstream makeEnvVariableName: upper case, '-' as '_'. */
export const makeEnvVariableName = (s: string) => s.replaceAll("-", "_").toUpperCase();

/** net.JoinHostPort: an IPv6 address in brackets. */
const joinHostPort = (host: string, port: number) => (host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`);

/** upstream makeLinkVariables: Docker's link variables for every port, the first also as <NAME>_PORT. */
function makeLinkVariables(s: ServiceLike): EnvVar[] {
  const prefix = makeEnvVariableName(s.metadata.name);
  const ip = s.spec?.clusterIP ?? "";
  const out: EnvVar[] = [];
  (s.spec?.ports ?? []).forEach((sp, i) => {
    const protocol = sp.protocol || "TCP";
    const url = `${protocol.toLowerCase()}://${joinHostPort(ip, sp.port)}`;
    if (i === 0) out.push({ name: `${prefix}_PORT`, value: url });
    const portPrefix = `${prefix}_PORT_${sp.port}_${protocol.toUpperCase()}`;
    out.push(
      { name: portPrefix, value: url },
      { name: `${portPrefix}_PROTO`, value: protocol.toLowerCase() },
      { name: `${portPrefix}_PORT`, value: String(sp.port) },
      { name: `${portPrefix}_ADDR`, value: ip },
    );
  });
  return out;
}

/** upstream envvars.FromServices, in the order of `services`. */
export function fromServices(services: readonly ServiceLike[]): EnvVar[] {
  const out: EnvVar[] = [];
  for (const s of services) {
    const ports = s.spec?.ports ?? [];
    // Services without a cluster IP are filtered before; one without ports has nothing to say.
    if (!isServiceIPSet(s) || ports.length === 0) continue;
    const name = makeEnvVariableName(s.metadata.name);
    out.push({ name: `${name}_SERVICE_HOST`, value: s.spec!.clusterIP! });
    out.push({ name: `${name}_SERVICE_PORT`, value: String(ports[0]!.port) });
    for (const sp of ports) if (sp.name) out.push({ name: `${name}_SERVICE_PORT_${makeEnvVariableName(sp.name)}`, value: String(sp.port) });
    out.push(...makeLinkVariables(s));
  }
  return out;
}

/**
 * upstream getServiceEnvVarMap: the variables of the master services of `default` and, with
 * enableServiceLinks, of every service in `namespace` (which wins over a master service of its name).
 */
export function serviceEnvVarMap(services: readonly ServiceLike[], namespace: string, enableServiceLinks: boolean): Map<string, string> {
  const byName = new Map<string, ServiceLike>();
  for (const s of services) {
    if (!isServiceIPSet(s)) continue;
    const name = s.metadata.name;
    if (s.metadata.namespace === NAMESPACE_DEFAULT && MASTER_SERVICES.has(name)) {
      if (!byName.has(name)) byName.set(name, s);
    } else if (s.metadata.namespace === namespace && enableServiceLinks) byName.set(name, s);
  }
  const ordered = [...byName.values()].sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
  return new Map(fromServices(ordered).map((e) => [e.name, e.value]));
}
