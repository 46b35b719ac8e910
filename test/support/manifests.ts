// Static pod manifests (YAML text, so tests can still edit a line) for pods with one container "main".

export interface StaticPodSpec {
  image: string;
  command?: string[];
  args?: string[];
  terminationGracePeriodSeconds: number;
  /** Default true (no CNI work). */
  hostNetwork?: boolean;
  labels?: Record<string, string>;
  /** Further YAML lines of the container (resources, probes …), each indented 6 and ending in a newline. */
  container?: string;
}

export function staticPodYaml(name: string, p: StaticPodSpec): string {
  return `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
${p.labels ? `  labels: ${JSON.stringify(p.labels)}\n` : ""}spec:
  hostNetwork: ${p.hostNetwork ?? true}
  terminationGracePeriodSeconds: ${p.terminationGracePeriodSeconds}
  containers:
    - name: main
      image: ${p.image}
${p.command ? `      command: ${JSON.stringify(p.command)}\n` : ""}${p.args ? `      args: ${JSON.stringify(p.args)}\n` : ""}${p.container ?? ""}`;
}
