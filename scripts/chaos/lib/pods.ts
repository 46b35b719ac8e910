// What scenarios read and write about pods: static pod manifests, the /pods view, the eviction
// trace records, and the predicates the checks use.

/** The images a scenario's pods run (the harness's ChaosRuntime carries them). */
export interface ChaosImages {
  busybox: string;
  pause: string;
  memhog: string;
}

/** One line of --eviction-trace (see src/eviction/trace-record.ts EvictionTraceRecord); loosely typed on purpose. */
export interface TraceRecord {
  kind: string;
  pod: string;
  uid: string;
  signal: string;
  observed: string | null;
  threshold: string | null;
  gracePeriodSeconds: number;
  message: string;
  trigger: { kind: string; reason?: string };
  timestamps: Record<string, string | null>;
  latencyMs: Record<string, number | null>;
  ranked: { pod: string; priority: number; usage: number }[];
  nodeConditions: string[];
  [k: string]: unknown;
}

/** The v1 Pod fields scenarios read from /pods. */
export interface PodView {
  metadata: { name: string; namespace?: string; uid?: string; annotations?: Record<string, string> };
  spec: Record<string, unknown>;
  status?: {
    phase?: string;
    reason?: string;
    message?: string;
    conditions?: { type: string; status: string; reason?: string }[];
    containerStatuses?: {
      name: string;
      containerID?: string;
      restartCount?: number;
      state?: { running?: object; waiting?: { reason?: string }; terminated?: { reason?: string; exitCode?: number } };
      lastState?: { terminated?: { reason?: string } };
    }[];
  };
}

export interface PodSpecInput {
  image?: string;
  command?: string[];
  args?: string[];
  requests?: Record<string, string>;
  limits?: Record<string, string>;
  priority?: number;
  restartPolicy?: "Always" | "OnFailure" | "Never";
  terminationGracePeriodSeconds?: number;
  /** emptyDir volume mounted at this path (disk scenarios). */
  emptyDir?: string;
  /** More container fields (probes, …), merged into the container. */
  container?: Record<string, unknown>;
  /** More pod volumes, each mounted at `mountPath` in the container. */
  volumes?: { volume: Record<string, unknown> & { name: string }; mountPath: string }[];
}

/** A static pod manifest (hostNetwork: no CNI work, fast sandbox start). */
export function podManifest(name: string, p: PodSpecInput, images: ChaosImages): object {
  const resources: Record<string, object> = {};
  if (p.requests) resources.requests = p.requests;
  if (p.limits) resources.limits = p.limits;
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, labels: { app: name, "bunlet.chaos": "1" } },
    spec: {
      hostNetwork: true,
      restartPolicy: p.restartPolicy ?? "Always",
      terminationGracePeriodSeconds: p.terminationGracePeriodSeconds ?? 1,
      ...(p.priority !== undefined ? { priority: p.priority } : {}),
      ...(p.emptyDir || p.volumes ? { volumes: [...(p.emptyDir ? [{ name: "scratch", emptyDir: {} }] : []), ...(p.volumes ?? []).map((v) => v.volume)] } : {}),
      containers: [
        {
          name: "main",
          image: p.image ?? images.busybox,
          ...(p.command ? { command: p.command } : {}),
          ...(p.args ? { args: p.args } : {}),
          ...(Object.keys(resources).length ? { resources } : {}),
          ...(p.emptyDir || p.volumes
            ? {
                volumeMounts: [
                  ...(p.emptyDir ? [{ name: "scratch", mountPath: p.emptyDir }] : []),
                  ...(p.volumes ?? []).map((v) => ({ name: v.volume.name, mountPath: v.mountPath })),
                ],
              }
            : {}),
          ...p.container,
        },
      ],
    },
  };
}

/** Trace timestamps carry microseconds ("…:05.123456Z"); Date.parse wants milliseconds. */
export function traceTimeMs(iso: string | null | undefined): number {
  if (!iso) return Number.NaN;
  const m = /^(.*\.\d{3})(\d*)Z$/.exec(iso);
  return m ? Date.parse(`${m[1]}Z`) + Number(`0.${m[2] || "0"}`) : Date.parse(iso);
}

export function isRunning(p: PodView | undefined): boolean {
  return p?.status?.phase === "Running" && (p.status.containerStatuses ?? []).every((c) => c.state?.running !== undefined);
}

/** True when the pod was evicted (Failed/Evicted) — what /pods shows after the kill. */
export function isEvicted(p: PodView | undefined): boolean {
  return p?.status?.phase === "Failed" && p.status.reason === "Evicted";
}

/** Container IDs and restart counts: "kept running" means these do not change. */
export function containerFingerprint(p: PodView | undefined): string {
  return (p?.status?.containerStatuses ?? []).map((c) => `${c.name}:${c.containerID}:${c.restartCount ?? 0}`).join(",");
}

/** One line per trace record: who, why, and the latencies from the crossing. */
export function formatTraceRecord(r: TraceRecord): string {
  const l = r.latencyMs;
  const ms = (v: number | null | undefined) => (v === null || v === undefined ? "-" : `${v.toFixed(1)}ms`);
  return (
    `${r.pod} signal=${r.signal} observed=${r.observed} threshold=${r.threshold} trigger=${r.trigger.kind}` +
    ` decision=${ms(l.decision)} signalSent=${ms(l.stopSignalSent)} exited=${ms(l.containerExited)} belowThreshold=${ms(l.belowThreshold)}` +
    ` rank=[${r.ranked.map((x) => x.pod).join(",")}] conditions=[${r.nodeConditions.join(",")}]`
  );
}
