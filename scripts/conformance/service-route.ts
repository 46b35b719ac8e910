// The `kubernetes` Service for pods, in a test bed with no kube-proxy: in-cluster clients (the CSI
// sidecars) dial KUBERNETES_SERVICE_HOST:PORT, the Service's ClusterIP:443, which the node injects.
// The API server listens on loopback only, which a pod's packets cannot reach, so a TCP relay listens on
// the node's InternalIP and forwards to it, and two DNAT rules (PREROUTING for pods, OUTPUT for
// hostNetwork pods) send ClusterIP:port to the relay — what kube-proxy's rules would do with an endpoint.
// TLS passes through untouched (the API server's certificate names the ClusterIP). The rules carry a
// comment naming the run and are deleted by stop(), also after a failed start.
import { createConnection, createServer, type Server } from "node:net";

export interface ServiceRoute {
  /** Deletes the rules and closes the relay. */
  stop(): Promise<void>;
}

/** The iptables arguments of one DNAT rule ("-A" to add, "-D" to delete). */
export function dnatRule(op: "-A" | "-D", chain: "PREROUTING" | "OUTPUT", clusterIP: string, servicePort: number, to: string, comment: string): string[] {
  return [
    "-t",
    "nat",
    op,
    chain,
    "-d",
    `${clusterIP}/32`,
    "-p",
    "tcp",
    "--dport",
    String(servicePort),
    "-m",
    "comment",
    "--comment",
    comment,
    "-j",
    "DNAT",
    "--to-destination",
    to,
  ];
}

function iptables(args: string[]): void {
  const p = Bun.spawnSync(["iptables", "-w", ...args], { stderr: "pipe" });
  if (p.exitCode !== 0) throw new Error(`iptables ${args.join(" ")}: ${p.stderr.toString().trim()}`);
}

/** A relay on host:0 to target (host:port); resolves with the port it listens on. */
function relay(host: string, target: { host: string; port: number }): Promise<{ server: Server; port: number }> {
  const server = createServer((client) => {
    const upstream = createConnection(target.port, target.host);
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on("error", end).on("close", end);
    upstream.on("error", end).on("close", end);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, host, () => resolve({ server, port: (server.address() as { port: number }).port }));
  });
}

/**
 * Routes clusterIP:servicePort (the `kubernetes` Service) to the API server at apiServer (a loopback
 * URL) through a relay on nodeIP.
 */
export async function startServiceRoute(o: { clusterIP: string; servicePort: number; apiServer: string; nodeIP: string; name: string }): Promise<ServiceRoute> {
  const api = new URL(o.apiServer);
  const { server, port } = await relay(o.nodeIP, { host: api.hostname, port: Number(api.port) });
  const to = `${o.nodeIP}:${port}`;
  const added: Array<"PREROUTING" | "OUTPUT"> = [];
  const stop = async () => {
    for (const chain of added.splice(0)) iptables(dnatRule("-D", chain, o.clusterIP, o.servicePort, to, o.name));
    await new Promise<void>((done) => server.close(() => done()));
  };
  try {
    for (const chain of ["PREROUTING", "OUTPUT"] as const) {
      iptables(dnatRule("-A", chain, o.clusterIP, o.servicePort, to, o.name));
      added.push(chain);
    }
  } catch (e) {
    await stop();
    throw e;
  }
  return { stop };
}
