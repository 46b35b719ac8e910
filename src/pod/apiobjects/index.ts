// Public surface of the API objects pods reference (upstream pkg/kubelet/secret, configmap, token,
// clustertrustbundle) and the service lister:
// per-object watches (or GETs) of secrets and configMaps, service account tokens via TokenRequest,
// the claims and PVs of persistentVolumeClaim volumes (GETs through a PersistentVolumeReader),
// combined into the per-sync snapshot the runtime's volume set-up and env read; the services the
// containers' service environment variables are made from.
export { apiPersistentVolumeReader, resolveClaimedVolumes, type PersistentVolumeReader } from "./persistent-volumes.ts";
export { createPodApiObjects, type PodApiObjectsManager, type PodApiObjectsOptions } from "./pod-objects.ts";
export { createObjectManager, type ChangeDetectionStrategy, type ObjectManager } from "./object-manager.ts";
export { createTokenManager, requiresRefresh, type IssuedToken, type TokenManager, type TokenRequestSpec } from "./token-manager.ts";
export { createTrustBundleManager, type TrustBundleManager, type TrustBundleManagerOptions } from "./trust-bundle-manager.ts";
export { createRuntimeClassManager, runtimeHandlerOf, type RuntimeClassManager } from "./runtime-class-manager.ts";
export { createServiceLister, SERVICES_NOT_SYNCED, type ServiceLister, type ServiceListerOptions } from "./service-lister.ts";
