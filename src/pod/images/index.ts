// Public surface of image management (upstream pkg/kubelet/images): the threshold-driven image garbage
// collector, its policy and the images it keeps, the image puller, and the image import directory.
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
export { createImagePuller, imagePullLimit, type ImagePuller, type PullTiming } from "./puller.ts";
export { createImageImportDir, type ImageImportDir, type ImageImportDirDeps, importFileKind, parseImageList } from "./import-dir.ts";
export { normalizeImageRef } from "./image-archive.ts";
