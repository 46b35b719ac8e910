// Event reasons the kubelet records (upstream pkg/kubelet/events/event.go), same strings.

// Container events
export const CreatedContainer = "Created";
export const StartedContainer = "Started";
export const FailedToCreateContainer = "Failed";
export const FailedToStartContainer = "Failed";
export const KillingContainer = "Killing";
export const PreemptContainer = "Preempting";
export const BackOffStartContainer = "BackOff";
export const ExceededGracePeriod = "ExceededGracePeriod";

// Pod events
export const FailedToKillPod = "FailedKillPod";
export const FailedToCreatePodContainer = "FailedCreatePodContainer";
export const NetworkNotReady = "NetworkNotReady";

// Image events
export const PullingImage = "Pulling";
export const PulledImage = "Pulled";
export const FailedToPullImage = "Failed";
export const FailedToInspectImage = "InspectFailed";
export const ErrImageNeverPullPolicy = "ErrImageNeverPull";
export const BackOffPullImage = "BackOff";

// Kubelet / node events
export const NodeReady = "NodeReady";
export const NodeNotReady = "NodeNotReady";
export const NodeSchedulable = "NodeSchedulable";
export const NodeNotSchedulable = "NodeNotSchedulable";
export const StartingKubelet = "Starting";
export const KubeletSetupFailed = "KubeletSetupFailed";
export const FailedAttachVolume = "FailedAttachVolume";
export const FailedMountVolume = "FailedMount";
export const VolumeResizeFailed = "VolumeResizeFailed";
export const FileSystemResizeFailed = "FileSystemResizeFailed";
export const FailedMapVolume = "FailedMapVolume";
export const WarnAlreadyMountedVolume = "AlreadyMountedVolume";
export const SuccessfulAttachVolume = "SuccessfulAttachVolume";
export const SuccessfulMountVolume = "SuccessfulMountVolume";
export const NodeRebooted = "Rebooted";
export const NodeShutdown = "Shutdown";
export const ContainerGCFailed = "ContainerGCFailed";
export const ImageGCFailed = "ImageGCFailed";
export const FailedNodeAllocatableEnforcement = "FailedNodeAllocatableEnforcement";
export const SuccessfulNodeAllocatableEnforcement = "NodeAllocatableEnforced";
export const SandboxChanged = "SandboxChanged";
export const FailedCreatePodSandBox = "FailedCreatePodSandBox";
export const FailedStatusPodSandBox = "FailedPodSandBoxStatus";
export const FailedMountOnFilesystemMismatch = "FailedMountOnFilesystemMismatch";
export const FailedPrepareDynamicResources = "FailedPrepareDynamicResources";
export const PossibleMemoryBackedVolumesOnDisk = "PossibleMemoryBackedVolumesOnDisk";
export const CgroupV1 = "CgroupV1";

// Image manager events
export const InvalidDiskCapacity = "InvalidDiskCapacity";
export const FreeDiskSpaceFailed = "FreeDiskSpaceFailed";

// Probe events
export const ContainerUnhealthy = "Unhealthy";
export const ContainerProbeWarning = "ProbeWarning";

// Pod worker events
export const FailedSync = "FailedSync";

// Config / validation
export const FailedValidation = "FailedValidation";

// Lifecycle hooks
export const FailedPostStartHook = "FailedPostStartHook";
export const FailedPreStopHook = "FailedPreStopHook";

// Eviction manager (pkg/kubelet/eviction: Reason, and the node event while reclaiming)
export const Evicted = "Evicted";
export const EvictionThresholdMet = "EvictionThresholdMet";

/** Node condition events (nodestatus setters: "Node <name> status is now: <reason>"). */
export const NodeHasSufficientMemory = "NodeHasSufficientMemory";
export const NodeHasInsufficientMemory = "NodeHasInsufficientMemory";
export const NodeHasNoDiskPressure = "NodeHasNoDiskPressure";
export const NodeHasDiskPressure = "NodeHasDiskPressure";
export const NodeHasSufficientPID = "NodeHasSufficientPID";
export const NodeHasInsufficientPID = "NodeHasInsufficientPID";
