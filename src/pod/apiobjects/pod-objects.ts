// What a pod references in the API, fetched before each of its syncs (upstream: the secret/configMap
// managers' GetSecret/GetConfigMap and the token manager, called from volume set-up and
// makeEnvironmentVariables): every referenced secret and configMap, a token per projected
// serviceAccountToken source and the trust anchors of each clusterTrustBundle projection (the
// ClusterTrustBundle manager, behind its feature gate) and the claims and PVs of its persistentVolumeClaim
// volumes (persistent-volumes.ts). Each failure is kept per object, so the volume or env var that needs
// it fails with upstream's message and the others are unaffected. The service lister, started once the
// node has a client, gives each pod its service environment variables.
import type { Clock } from "../../clock.ts";
import type { KubeClient } from "../../kube/index.ts";
import { podConfigMapNames, podSecretNames, type RefPod } from "../api-references.ts";
import { serviceEnvVarMap } from "../envvars/index.ts";
import { isStaticPod } from "../pod-like.ts";
import type { KubePod, PodApiObjectsSource } from "../kuberuntime/index.ts";
import { tokenKey, trustBundleKey, type ClusterTrustBundleProjection, type ConfigMapObject, type PodApiObjects, type SecretObject } from "../volumes/index.ts";
import { apiPersistentVolumeReader, podClaimVolumes, resolveClaimedVolumes, type PersistentVolumeReader } from "./persistent-volumes.ts";
import { createObjectManager, type ChangeDetectionStrategy, type ObjectManager } from "./object-manager.ts";
import { createRuntimeClassManager, type RuntimeClassManager } from "./runtime-class-manager.ts";
import { createServiceLister, SERVICES_NOT_SYNCED, type ServiceLister } from "./service-lister.ts";
import { createTokenManager, type TokenManager } from "./token-manager.ts";
import { createTrustBundleManager, type TrustBundleManager } from "./trust-bundle-manager.ts";

export interface PodApiObjectsOptions {
  /** The API client once the node has one (after a TLS bootstrap); undefined before. */
  client: () => KubeClient | undefined;
  clock: Clock;
  /** configMapAndSecretChangeDetectionStrategy (default Watch). */
  strategy?: ChangeDetectionStrategy;
  syncTimeoutMs?: number;
  /** featureGates.ClusterTrustBundleProjection (GA and on by default since upstream v1.37; false turns it off). */
  clusterTrustBundleProjection?: boolean;
  /** Orders trust anchors (tests); default random per process. */
  trustAnchorSalt?: string;
}

export interface PodApiObjectsManager extends PodApiObjectsSource {
  readonly secrets: ObjectManager<SecretObject>;
  readonly configMaps: ObjectManager<ConfigMapObject>;
  readonly tokens: TokenManager;
  readonly trustBundles: TrustBundleManager;
  readonly services: ServiceLister;
  readonly runtimeClasses: RuntimeClassManager;
  /** The GETs of claims and their PVs (the API server's). */
  readonly persistentVolumes: PersistentVolumeReader;
  /** The pod's objects; its claims and PVs read through `persistentVolumes` (default: the API server's). */
  resolve(pod: KubePod, persistentVolumes?: PersistentVolumeReader): Promise<PodApiObjects | undefined>;
  serviceEnv(pod: KubePod): ReadonlyMap<string, string>;
  stop(): void;
}

async function settled<T>(names: readonly string[], get: (n: string) => Promise<T>): Promise<Map<string, T | Error>> {
  const values = await Promise.all(
    names.map((n) =>
      get(n).then(
        (v) => v,
        (e: unknown) => (e instanceof Error ? e : new Error(String(e))),
      ),
    ),
  );
  return new Map(names.map((n, i) => [n, values[i]!]));
}

interface TokenSource {
  audience?: string;
  expirationSeconds?: number;
}

type Projection = { projected?: { sources?: { serviceAccountToken?: TokenSource; clusterTrustBundle?: ClusterTrustBundleProjection }[] } };
const projections = (pod: KubePod) => ((pod.spec.volumes ?? []) as Projection[]).flatMap((v) => v.projected?.sources ?? []);

const tokenSources = (pod: KubePod): TokenSource[] => projections(pod).flatMap((s) => (s.serviceAccountToken ? [s.serviceAccountToken] : []));

/** The pod's clusterTrustBundle projections, one per distinct selection. */
function trustBundleSources(pod: KubePod): Map<string, ClusterTrustBundleProjection> {
  return new Map(projections(pod).flatMap((s) => (s.clusterTrustBundle ? [[trustBundleKey(s.clusterTrustBundle), s.clusterTrustBundle] as const] : [])));
}

export function createPodApiObjects(opts: PodApiObjectsOptions): PodApiObjectsManager {
  const strategy = opts.strategy ?? "Watch";
  const secrets = createObjectManager<SecretObject>({
    client: opts.client,
    resource: "secrets",
    strategy,
    clock: opts.clock,
    syncTimeoutMs: opts.syncTimeoutMs,
  });
  const configMaps = createObjectManager<ConfigMapObject>({
    client: opts.client,
    resource: "configmaps",
    strategy,
    clock: opts.clock,
    syncTimeoutMs: opts.syncTimeoutMs,
  });
  const tokens = createTokenManager({ client: opts.client, clock: opts.clock });
  const trustBundles = createTrustBundleManager({
    client: opts.client,
    clock: opts.clock,
    enabled: opts.clusterTrustBundleProjection !== false,
    salt: opts.trustAnchorSalt,
  });
  const services = createServiceLister({ client: opts.client, clock: opts.clock });
  const runtimeClasses = createRuntimeClassManager({ client: opts.client, clock: opts.clock });
  const persistentVolumes = apiPersistentVolumeReader(opts.client);

  async function resolve(pod: KubePod, claimReader: PersistentVolumeReader = persistentVolumes): Promise<PodApiObjects | undefined> {
    const ns = pod.metadata.namespace ?? "";
    const uid = pod.metadata.uid ?? "";
    const refPod = pod as unknown as RefPod; // the runtime's structural pod, read for its references
    const secretNames = podSecretNames(refPod);
    const configMapNames = podConfigMapNames(refPod);
    const sources = tokenSources(pod);
    const bundles = trustBundleSources(pod);
    const claimCount = podClaimVolumes(pod).size;
    if (secretNames.length + configMapNames.length + sources.length + bundles.size + claimCount === 0) return undefined;
    secrets.registerPod(uid, ns, secretNames);
    configMaps.registerPod(uid, ns, configMapNames);
    const sa = pod.spec.serviceAccountName ?? "";
    const tokenKeys = [...new Set(sources.map((s) => tokenKey(s.audience, s.expirationSeconds ?? 3600)))];
    const [s, c, t, b, claims] = await Promise.all([
      settled(secretNames, (n) => secrets.get(ns, n)),
      settled(configMapNames, (n) => configMaps.get(ns, n)),
      settled(tokenKeys, (k) => {
        const [audience, exp] = k.split("\n") as [string, string];
        return tokens.getServiceAccountToken(ns, sa, {
          ...(audience ? { audiences: [audience] } : {}),
          expirationSeconds: Number(exp),
          boundObjectRef: { apiVersion: "v1", kind: "Pod", name: pod.metadata.name, uid },
        });
      }),
      settled([...bundles.keys()], (k) => {
        const p = bundles.get(k)!;
        return p.name !== undefined
          ? trustBundles.getTrustAnchorsByName(p.name, p.optional === true)
          : trustBundles.getTrustAnchorsBySigner(p.signerName ?? "", p.labelSelector, p.optional === true);
      }),
      claimCount > 0 ? resolveClaimedVolumes(claimReader, pod) : undefined,
    ]);
    return { namespace: ns, secrets: s, configMaps: c, tokens: t, trustBundles: b, ...(claims ? { claims } : {}) };
  }

  return {
    secrets,
    configMaps,
    tokens,
    trustBundles,
    services,
    runtimeClasses,
    persistentVolumes,
    resolve,
    runtimeHandler: (pod) => runtimeClasses.lookupRuntimeHandler(pod.spec.runtimeClassName),
    // upstream makeEnvironmentVariables: an API pod waits for the first list; a static pod does not.
    serviceEnv(pod) {
      if (!isStaticPod(pod) && !services.hasSynced()) throw new Error(SERVICES_NOT_SYNCED);
      return serviceEnvVarMap(services.list(), pod.metadata.namespace ?? "", pod.spec.enableServiceLinks ?? true);
    },
    forget(uid) {
      secrets.unregisterPod(uid);
      configMaps.unregisterPod(uid);
      tokens.deleteServiceAccountToken(uid);
    },
    stop() {
      secrets.stop();
      configMaps.stop();
      trustBundles.stop();
      services.stop();
      runtimeClasses.stop();
    },
  };
}
