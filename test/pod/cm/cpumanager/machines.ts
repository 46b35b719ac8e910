// CPU topologies of test machines, as upstream's cpumanager tests describe them.
import { topologyFrom, type CPUTopology } from "../../../../src/pod/cm/cpumanager/topology.ts";

/** `sockets` sockets × `cores` cores × `threads` threads; CPU ids as Linux numbers them (thread siblings n apart). */
export function machine(sockets: number, cores: number, threads: number, numaPerSocket = 1): CPUTopology {
  const physical = sockets * cores;
  const cpus = [];
  for (let t = 0; t < threads; t++)
    for (let s = 0; s < sockets; s++)
      for (let c = 0; c < cores; c++) {
        const cpu = t * physical + s * cores + c;
        cpus.push({ cpu, socket: s, core: c, numaNode: s * numaPerSocket + Math.floor((c * numaPerSocket) / cores) });
      }
  return topologyFrom(cpus);
}
