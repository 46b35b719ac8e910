// Why the node is not Ready, as upstream's runtimeState and Ready setter word it: the runtime
// never answered / is down / says RuntimeReady=false, and the network's NetworkReady=false.
import type { CriClient } from "../cri/client.ts";
import type { RuntimeCondition } from "../cri/types.ts";

export interface RuntimeReadiness {
  /** "containerd://1.6.20~ds1", once Version answered. */
  version?: string;
  errors: string[];
}

/** The %v of a CRI RuntimeCondition as the kubelet prints it. */
const describe = (c: RuntimeCondition | undefined) => (c ? `${c.type}=${c.status} reason:${c.reason} message:${c.message}` : "<nil>");

export function readinessErrors(conditions: RuntimeCondition[] | undefined): string[] {
  const errs: string[] = [];
  const runtime = conditions?.find((c) => c.type === "RuntimeReady");
  if (!runtime?.status) errs.push(`container runtime not ready: ${describe(runtime)}`);
  const network = conditions?.find((c) => c.type === "NetworkReady");
  if (!network?.status) errs.push(`container runtime network not ready: ${describe(network)}`);
  return errs;
}

/** Asks the runtime now; a failing call is "container runtime is down". */
export async function runtimeReadiness(cri: CriClient): Promise<RuntimeReadiness> {
  try {
    const [v, s] = await Promise.all([cri.version(), cri.status(false)]);
    return { version: `${v.runtimeName}://${v.runtimeVersion}`, errors: readinessErrors(s.status?.conditions) };
  } catch {
    return { errors: ["container runtime is down"] };
  }
}
