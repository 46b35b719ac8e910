// The representative [NodeConformance] subset CI runs (--subset): one or more tests of each area the
// kubelet owns — pod lifecycle and status, probes, lifecycle hooks, init containers, env and
// downward API, configMap/secret/projected/emptyDir/hostPath volumes (a hostPath symlink's subPath from
// the storage run, storage.ts), security context, kubelet logs and
// exec, ephemeral containers, service environment variables, HTTP probe redirects. Patterns are
// ginkgo focus expressions (Go RE2) over the full test name.
export const SUBSET: readonly string[] = [
  "\\[sig-node\\] Pods should get a host IP",
  "\\[sig-node\\] Pods should be submitted and removed",
  '\\[sig-node\\] Probing container should be restarted with a exec "cat /tmp/health" liveness probe',
  "\\[sig-node\\] Probing container with readiness probe should not be ready before initial delay",
  "\\[sig-node\\] Container Lifecycle Hook when create a pod with lifecycle hook should execute poststart exec hook",
  "\\[sig-node\\] InitContainer should invoke init containers on a RestartAlways pod",
  "\\[sig-node\\] Downward API should provide pod name, namespace and IP address as env vars",
  "\\[sig-storage\\] ConfigMap should be consumable from pods in volume \\[Conformance\\]",
  "\\[sig-storage\\] Secrets should be consumable from pods in volume \\[Conformance\\]",
  "\\[sig-storage\\] Projected combined should project all components",
  "\\[sig-storage\\] EmptyDir volumes should support \\(root,0644,default\\)",
  "\\[sig-storage\\] HostPath should support r/w",
  "\\[sig-storage\\] In-tree Volumes \\[Driver: hostPathSymlink\\] \\[Testpattern: Inline-volume \\(default fs\\)\\] subPath should support existing directory",
  "\\[sig-node\\] Security Context When creating a container with runAsUser should run the container with uid 65534",
  "\\[sig-node\\] Kubelet when scheduling a busybox command in a pod should print the output to logs",
  "\\[sig-node\\] Variable Expansion should allow composing env vars into new env vars",
  "\\[sig-node\\] ConfigMap should be consumable via the environment",
  "\\[sig-node\\] Pods should contain environment variables for services",
  "\\[sig-node\\] Ephemeral Containers will start an ephemeral container in an existing pod",
  "\\[sig-node\\] Probing container should be restarted with a local redirect http liveness probe",
  "\\[sig-node\\] Lifecycle sleep action zero value",
];
