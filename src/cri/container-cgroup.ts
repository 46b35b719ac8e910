// The cgroup a CRI runtime gives a container under its pod's cgroup, as cadvisor's container handlers
// recognise them: containerd names it by container ID (cgroupfs) or `cri-containerd-<id>.scope`
// (systemd); CRI-O `crio-<id>` (cgroupfs) or `crio-<id>.scope` (systemd), after its
// internal/config/cgmgr containerCgroupPath and the systemd manager's scope prefix.

/** The leaf names a container's cgroup may have under its pod's, for every runtime and cgroup driver. */
export function containerCgroupLeaves(containerId: string): string[] {
  return [containerId, `cri-containerd-${containerId}.scope`, `crio-${containerId}`, `crio-${containerId}.scope`];
}

/** Whether a cgroup path's last element is one of the container's (see containerCgroupLeaves). */
export function isContainerCgroupLeaf(leaf: string, containerId: string): boolean {
  return containerCgroupLeaves(containerId).includes(leaf);
}
