// Public surface of image management beyond pulling (upstream pkg/kubelet/images): the threshold-driven
// image garbage collector, its policy, and the images it keeps.
export {
  createImageGCManager,
  IMAGE_GC_PERIOD_MS,
  type ImageFsStats,
  type ImageGCManager,
  type ImageGCManagerDeps,
  type ImageGCResult,
} from "./image-gc-manager.ts";
export { detectImages, type GcPlan, type GcTarget, type ImageGCPolicy, type ImageRecord, imageGCTarget, planImageGC } from "./image-gc-policy.ts";
export { sandboxImages } from "./sandbox-image.ts";
