// Node condition events (upstream nodestatus setters' recordEventFunc): "Node <name> status is now:
// <reason>", Normal, when a condition changes — the pressure conditions also when they first appear
// (Unknown → False: NodeHasSufficientMemory, …), Ready only on a transition (NodeReady/NodeNotReady).
import type { NodeCondition } from "../kube/types.ts";

const PRESSURE: Record<string, [onTrue: string, onFalse: string]> = {
  MemoryPressure: ["NodeHasInsufficientMemory", "NodeHasSufficientMemory"],
  DiskPressure: ["NodeHasDiskPressure", "NodeHasNoDiskPressure"],
  PIDPressure: ["NodeHasInsufficientPID", "NodeHasSufficientPID"],
};

/** The event reasons for going from `before` (undefined: a new Node) to `after`, in `after`'s order. */
export function nodeConditionEvents(before: readonly NodeCondition[] | undefined, after: readonly NodeCondition[]): string[] {
  const out: string[] = [];
  for (const c of after) {
    const old = before?.find((x) => x.type === c.type);
    const pressure = PRESSURE[c.type];
    if (pressure) {
      if ((old?.status ?? "Unknown") !== c.status && (c.status === "True" || c.status === "False")) out.push(c.status === "True" ? pressure[0] : pressure[1]);
    } else if (c.type === "Ready" && old && old.status !== c.status) {
      out.push(c.status === "True" ? "NodeReady" : "NodeNotReady");
    }
  }
  return out;
}

export const nodeStatusEventMessage = (nodeName: string, reason: string) => `Node ${nodeName} status is now: ${reason}`;

/** MachineInfo setter: a boot ID other than the one the Node shows means the node rebooted (Warning). */
export function rebootedMessage(nodeName: string, oldBootId: string | undefined, bootId: string | undefined): string | undefined {
  if (!oldBootId || !bootId || oldBootId === bootId) return undefined;
  return `Node ${nodeName} has been rebooted, boot id: ${bootId}`;
}
