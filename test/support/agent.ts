// How tests and benchmarks configure a bunlet that runs static pods on a test containerd: its flags
// (for dist/bunlet or loadConfig) and its KubeletConfiguration file.
import { writeFileSync } from "node:fs";

export interface StaticPodAgent {
  /** --pod-manifest-path / staticPodPath. */
  manifests: string;
  cgroupRoot: string;
  /** CRI endpoint, e.g. TestContainerd.endpoint. */
  endpoint: string;
  /** Main server port; the healthz and read-only ports are off. */
  port: number;
}

/** Command-line flags of such an agent, with its --root-dir and node name. */
export function staticPodFlags(a: StaticPodAgent & { rootDir: string; node: string }): string[] {
  return [
    `--root-dir=${a.rootDir}`,
    `--pod-manifest-path=${a.manifests}`,
    `--cgroup-root=${a.cgroupRoot}`,
    `--container-runtime-endpoint=${a.endpoint}`,
    `--hostname-override=${a.node}`,
    `--port=${a.port}`,
    "--healthz-port=0",
    "--read-only-port=0",
  ];
}

/**
 * Writes the KubeletConfiguration of such an agent to `path` (manifests checked every second, pod
 * logs in `podLogsDir`), with `extra` YAML lines; returns `path`.
 */
export function writeStaticPodConfig(path: string, a: StaticPodAgent & { podLogsDir: string }, extra: string[] = []): string {
  writeFileSync(
    path,
    [
      "apiVersion: kubelet.config.k8s.io/v1beta1",
      "kind: KubeletConfiguration",
      `staticPodPath: ${a.manifests}`,
      "fileCheckFrequency: 1s",
      `containerRuntimeEndpoint: ${a.endpoint}`,
      `cgroupRoot: ${a.cgroupRoot}`,
      `podLogsDir: ${a.podLogsDir}`,
      ...extra,
      `port: ${a.port}`,
      "healthzPort: 0",
      "readOnlyPort: 0",
      "",
    ].join("\n"),
  );
  return path;
}
