// What the [NodeConformance] run leaves out, each pattern with its reason. Patterns are Go regular
// expressions matched by ginkgo against a test's full name (--ginkgo.skip); the same list is used
// whichever node (bunlet or the upstream kubelet) is under test, so the two runs are comparable.

export interface Skip {
  /** A Go RE2 pattern, without anchors. */
  pattern: string;
  reason: string;
}

export const SKIPS: readonly Skip[] = [
  { pattern: "\\[Serial\\]", reason: "needs the whole cluster to itself; the run is parallel" },
  { pattern: "\\[Disruptive\\]", reason: "restarts or breaks node components (upstream runs these apart)" },
  { pattern: "\\[Flaky\\]", reason: "upstream marks them unreliable" },
  { pattern: "\\[Feature:[^\\]]+\\]", reason: "needs a feature or add-on that is not on by default" },
  { pattern: "\\[FeatureGate:[^\\]]+\\]", reason: "needs a feature gate that is off by default" },
  { pattern: "\\[Alpha\\]|\\[Beta\\]", reason: "alpha or beta features, off by default" },
  { pattern: "\\[Environment:[^\\]]+\\]", reason: "needs a particular environment (e.g. NotInUserNS)" },
  { pattern: "\\[sig-network\\]", reason: "needs pod-to-pod and service networking (kube-proxy, cluster DNS), not part of the one-node test bed" },
  { pattern: "should be able to pull", reason: "pulls from a registry; the machine reaches none" },
  { pattern: "image from invalid registry|pulling from a private registry|ImagePullBackOff", reason: "exercises registry access; the machine reaches none" },
];

/** The --ginkgo.skip expression for the list. */
export function skipExpression(skips: readonly Skip[] = SKIPS): string {
  return skips.map((s) => `(${s.pattern})`).join("|");
}
