// Public surface of node autonomy (bunlet's own; OpenYurt's YurtHub cache and KubeEdge's MetaManager
// do the same for their nodes): the on-disk cache of the API pods and what they reference, the object
// source that falls back to it, the CSI volume set-up's reads that do the same, and the decision made
// when the API server lists the pods again.
export { createAutonomyStore, type AutonomyStore, type AutonomyStoreOptions, type StoredObjectKind } from "./store.ts";
export { withAutonomyCache } from "./offline-objects.ts";
export { withCSIObjectsCache, type GetObject } from "./offline-csi-objects.ts";
export { createOfflineStart, nodeForCache, type OfflineStart, type OfflineStartOptions } from "./offline-start.ts";
export { reconcileWithApi, podSpecKey, type PodReconcile, type ReconcileDecision } from "./reconcile.ts";
export { parseCacheEntry, encodeCacheEntry, cacheFileName, jwtExpirationMs, CacheEntryError, type CachedToken, type CacheKind } from "./cache-entry.ts";
