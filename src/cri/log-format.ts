// The CRI container log format (cri-api's "<RFC3339Nano> <stream> <P|F> <content>" lines, as
// containerd writes them), shared by the kubelet API's /containerLogs and by kuberuntime reading a
// failed container's log tail into its termination message (upstream pkg/kubelet/kuberuntime/logs).

export interface CriLogEntry {
  timeText: string;
  stream: "stdout" | "stderr";
  partial: boolean;
  content: string;
}

/** One CRI log line; undefined when it is not in the CRI format. No regex, no date parse: hot path. */
export function decodeCriLine(line: string): CriLogEntry | undefined {
  const a = line.indexOf(" ");
  if (a <= 0) return undefined;
  const b = line.indexOf(" ", a + 1);
  if (b < 0) return undefined;
  const stream = line.slice(a + 1, b);
  if (stream !== "stdout" && stream !== "stderr") return undefined;
  const tag = line[b + 1];
  if ((tag !== "P" && tag !== "F") || (line.length > b + 2 && line[b + 2] !== " ")) return undefined;
  const timeText = line.slice(0, a);
  if (!/^\d{4}-\d\d-\d\dT/.test(timeText)) return undefined;
  return { timeText, stream, partial: tag === "P", content: line.slice(b + 3) };
}

/** What the container wrote for one entry, as upstream's log writer prints it. */
export function formatEntry(e: CriLogEntry, timestamps: boolean): string {
  return `${timestamps ? `${e.timeText} ` : ""}${e.content}${e.partial ? "" : "\n"}`;
}
