// The node's Summary API (/stats/summary) as a test reads it: one pod's volume, polled until the
// volume stat calculator has measured it (its first figures come a period after the pod started).
import type { VolumeStats } from "../../../src/stats/summary.ts";
import { until } from "../wait.ts";
import type { UpstreamCluster } from "./node.ts";

interface SummaryPod {
  podRef: { uid: string };
  volume?: VolumeStats[];
}

/** The volume `volume` of the pod `podUid` in /stats/summary, once it is there (default 30 s). */
export function summaryVolume(c: Pick<UpstreamCluster, "nodeRequest">, podUid: string, volume: string, timeoutMs = 30_000): Promise<VolumeStats> {
  return until(
    "the volume in /stats/summary",
    async () => {
      const summary = (await (await c.nodeRequest("/stats/summary")).json()) as { pods: SummaryPod[] };
      return summary.pods.find((p) => p.podRef.uid === podUid)?.volume?.find((v) => v.name === volume);
    },
    timeoutMs,
    { intervalMs: 300 },
  );
}
