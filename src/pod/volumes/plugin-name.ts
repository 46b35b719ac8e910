// Upstream volume plugin names (kubernetes.io/empty-dir, …), as the volume manager's and the storage
// operation metrics label them.
const PLUGINS: [field: string, plugin: string][] = [
  ["emptyDir", "kubernetes.io/empty-dir"],
  ["hostPath", "kubernetes.io/host-path"],
  ["downwardAPI", "kubernetes.io/downward-api"],
  ["projected", "kubernetes.io/projected"],
  ["configMap", "kubernetes.io/configmap"],
  ["secret", "kubernetes.io/secret"],
  ["persistentVolumeClaim", "kubernetes.io/persistent-volume-claim"],
  ["csi", "kubernetes.io/csi"],
];

/** The plugin of a pod volume (by which source field it sets); undefined for a volume with none of them. */
export function volumePluginName(v: object): string | undefined {
  const rec = v as Record<string, unknown>;
  return PLUGINS.find(([field]) => rec[field] !== undefined && rec[field] !== null)?.[1];
}
