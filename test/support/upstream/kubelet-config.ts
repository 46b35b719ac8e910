// The KubeletConfiguration of a test node, one text for both agents: kubeadm's for a node joined to the
// control plane, a standalone one (static pods only, no API server) for benchmarks; and what the
// upstream kubelet needs on top of a configuration bunlet takes as it is.
import { existsSync } from "node:fs";
import { createCgroupTree } from "../cgroup.ts";

/** A test node's paths and port, as both agents' configuration names them. */
export interface NodeConfigPaths {
  manifests: string;
  /** CRI endpoint, e.g. TestContainerd.endpoint. */
  endpoint: string;
  cgroupRoot: string;
  podLogsDir: string;
  /** The main port; the healthz and read-only ports are off. */
  port: number;
  /** Default cgroupfs; systemd with cgroupRoot "/" (the kubepods slices), as on a systemd host. */
  cgroupDriver?: "cgroupfs" | "systemd";
}

/** The lines of the node's paths, runtime, cgroup driver and ports. */
function nodeLines(a: NodeConfigPaths): string[] {
  return [
    `cgroupDriver: ${a.cgroupDriver ?? "cgroupfs"}`,
    `staticPodPath: ${a.manifests}`,
    `containerRuntimeEndpoint: ${a.endpoint}`,
    `cgroupRoot: ${a.cgroupRoot}`,
    `podLogsDir: ${a.podLogsDir}`,
    "healthzBindAddress: 127.0.0.1",
    "healthzPort: 0",
    "readOnlyPort: 0",
    `port: ${a.port}`,
  ];
}

const HEADER = ["apiVersion: kubelet.config.k8s.io/v1beta1", "kind: KubeletConfiguration"];

/** kubeadm's KubeletConfiguration (cmd/kubeadm/app/componentconfigs/kubelet.go defaults), on this node's paths. */
export function kubeadmKubeletConfig(a: NodeConfigPaths & { caFile: string }, extra: string[] = []): string {
  return [
    ...HEADER,
    "authentication:",
    "  anonymous: { enabled: false }",
    "  webhook: { enabled: true, cacheTTL: 0s }",
    `  x509: { clientCAFile: ${a.caFile} }`,
    "authorization:",
    "  mode: Webhook",
    "  webhook: { cacheAuthorizedTTL: 0s, cacheUnauthorizedTTL: 0s }",
    "clusterDNS: [10.96.0.10]",
    "clusterDomain: cluster.local",
    "rotateCertificates: true",
    "fileCheckFrequency: 1s",
    ...nodeLines(a),
    ...extra,
    "",
  ].join("\n");
}

/**
 * A standalone node's KubeletConfiguration: no API server to authenticate against (the defaults' webhook
 * authentication and authorization need one), so anonymous requests and AlwaysAllow, on loopback only
 * (bunlet then serves plain HTTP, the kubelet HTTPS with a self-signed pair); swap tolerated; every other
 * field at its default.
 */
export function standaloneKubeletConfig(a: NodeConfigPaths, extra: string[] = []): string {
  return [
    ...HEADER,
    "address: 127.0.0.1",
    "authentication:",
    "  anonymous: { enabled: true }",
    "  webhook: { enabled: false }",
    "authorization:",
    "  mode: AlwaysAllow",
    "failSwapOn: false",
    ...nodeLines(a),
    ...extra,
    "",
  ].join("\n");
}

export const cgroupV1Host = (): boolean => !existsSync("/sys/fs/cgroup/cgroup.controllers");

/**
 * A configuration both agents take, made ready for the upstream kubelet: on a cgroup v1 host it needs
 * failCgroupV1 false (it refuses v1 otherwise), and it wants its cgroupRoot to exist in every hierarchy
 * (bunlet creates it) — created here. Returns the configuration's text.
 */
export function forUpstreamKubelet(config: string, cgroupRoot: string): string {
  createCgroupTree(cgroupRoot);
  return cgroupV1Host() ? `${config}failCgroupV1: false\n` : config;
}
