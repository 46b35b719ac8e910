// Scrape-time kubelet gauges read from the pod lifecycle (upstream pkg/kubelet/metrics and
// volumemanager/metrics): kubelet_node_name{node}, kubelet_desired_pods{static}, kubelet_active_pods{static},
// kubelet_mirror_pods, kubelet_node_config_error, kubelet_preemptions (registered, as upstream, even when
// nothing was preempted) and volume_manager_total_volumes{plugin_name,state}.
import { isMirrorPod, isStaticPod } from "../pod/pod-like.ts";
import { volumePluginName } from "../pod/volumes/index.ts";
import type { Pod } from "../pod/types.ts";
import type { CollectedMetric, Counter, Registry } from "../server/metrics.ts";

/** What the collectors read from the pod lifecycle. */
export interface PodCountsSource {
  /** Pods the sources want run (upstream pod manager). */
  desiredPods(): readonly Pod[];
  /** Admitted, not terminal (what admission counts). */
  activePods(): readonly Pod[];
  /** Pods whose volumes are set up: started or running pods (upstream actual state of world). */
  mountedPods(): readonly Pod[];
}

/** volume_manager_total_volumes samples: volumes per plugin in the desired and the actual state. */
export function volumeSamples(desired: readonly Pod[], actual: readonly Pod[]): CollectedMetric["samples"] {
  const samples: CollectedMetric["samples"] = [];
  for (const [state, pods] of [
    ["desired_state_of_world", desired],
    ["actual_state_of_world", actual],
  ] as const) {
    const counts = new Map<string, number>();
    for (const p of pods)
      for (const v of p.spec.volumes ?? []) {
        const plugin = volumePluginName(v);
        if (plugin) counts.set(plugin, (counts.get(plugin) ?? 0) + 1);
      }
    for (const [plugin_name, value] of [...counts].sort()) samples.push({ labels: { plugin_name, state }, value });
  }
  return samples;
}

const byStatic = (pods: readonly Pod[]) => {
  const n = pods.filter((p) => isStaticPod(p)).length;
  return [
    { labels: { static: "true" }, value: n },
    { labels: { static: "false" }, value: pods.length - n },
  ];
};

/** Registers the node's series; returns kubelet_preemptions, which the preemption handler counts in. */
export function nodeMetrics(registry: Registry, opts: { nodeName: string; pods: PodCountsSource }): Counter {
  registry.gauge({ name: "kubelet_node_name", help: "The node's name. The count is always 1.", labelNames: ["node"] }).set(1, { node: opts.nodeName });
  // bunlet refuses to start on a configuration error (there is no dynamic reconfiguration), so a
  // running bunlet has none; the series exists for the dashboards and alerts that query it.
  registry
    .gauge({
      name: "kubelet_node_config_error",
      help: "This metric is true (1) if the node is experiencing a configuration-related error, false (0) otherwise.",
    })
    .set(0);
  const preemptions = registry.counter({
    name: "kubelet_preemptions",
    help: "Cumulative number of pod preemptions by preemption resource",
    labelNames: ["preemption_signal"],
  });
  registry.collect(() => {
    const desired = opts.pods.desiredPods();
    return [
      {
        name: "kubelet_desired_pods",
        help: "The number of pods the kubelet is being instructed to run. static is true if the pod is not from the apiserver.",
        type: "gauge",
        samples: byStatic(desired),
      },
      {
        name: "kubelet_active_pods",
        help: "The number of pods the kubelet considers active and which are being considered when admitting new pods. static is true if the pod is not from the apiserver.",
        type: "gauge",
        samples: byStatic(opts.pods.activePods()),
      },
      {
        name: "kubelet_mirror_pods",
        help: "The number of mirror pods the kubelet will try to create (one per admitted static pod)",
        type: "gauge",
        samples: [{ value: desired.filter((p) => isMirrorPod(p)).length }],
      },
      {
        name: "volume_manager_total_volumes",
        help: "Number of volumes in Volume Manager",
        type: "gauge",
        samples: volumeSamples(desired, opts.pods.mountedPods()),
      },
    ];
  });
  return preemptions;
}
