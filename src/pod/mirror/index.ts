// Mirror pods (upstream pkg/kubelet/pod mirror_client.go + the kubelet's mirror pod sync): the API
// objects that show the node's static pods, created, replaced and deleted with them.
export { buildMirrorPod, isMirrorPodOf, mirrorPodHash, podFullName, staticPodHash } from "./mirror-pod.ts";
export { createMirrorPodManager, type MirrorPodManager, type MirrorPodManagerOptions } from "./manager.ts";
