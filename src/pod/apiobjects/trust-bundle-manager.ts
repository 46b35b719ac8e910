// The kubelet's ClusterTrustBundle manager (upstream pkg/kubelet/clustertrustbundle, the
// LazyInformerManager): nothing runs until a pod's projected volume first asks for trust anchors;
// then discovery picks the newest certificates.k8s.io version that serves clustertrustbundles
// (v1, v1beta1, v1alpha1 — a 404 moves on to the next), and one reflector lists and watches the
// whole cluster-scoped collection, waited for up to 10 s. Reads come from that copy, so an update
// reaches the files at the pod's next sync, as for configMaps. With the ClusterTrustBundleProjection
// gate off (it is GA and on by default since v1.37) — or when no version serves them — every read fails
// with upstream's NoopManager message.
import { randomUUID } from "node:crypto";
import type { Clock } from "../../clock.ts";
import { isNotFound, labelSelectorMatcher, type KubeClient, type LabelSelector } from "../../kube/index.ts";
import { kv, log } from "../../log.ts";
import { startReflector, type Reflector } from "./reflector.ts";
import { normalizeTrustAnchors } from "./trust-anchors.ts";

export const GROUP = "certificates.k8s.io";
/** Tried in this order (newest upstream). */
export const VERSIONS = ["v1", "v1beta1", "v1alpha1"] as const;
export const NOT_SUPPORTED = "ClusterTrustBundle projection is not supported in static kubelet mode";

export interface TrustBundleManagerOptions {
  client: () => KubeClient | undefined;
  clock: Clock;
  /** featureGates.ClusterTrustBundleProjection. */
  enabled: boolean;
  /** How long the first read waits for the first list (default 10 s, upstream's). */
  syncTimeoutMs?: number;
  /** Orders the anchors (default: random per process). */
  salt?: string;
}

export interface TrustBundleManager {
  /** The anchors of the named bundle; "" when it is missing and `allowMissing`. */
  getTrustAnchorsByName(name: string, allowMissing: boolean): Promise<string>;
  /** The anchors of every bundle of `signerName` the selector matches (none: nothing matches). */
  getTrustAnchorsBySigner(signerName: string, labelSelector: LabelSelector | undefined, allowMissing: boolean): Promise<string>;
  /** The group/version being watched; "none" when no version serves them; undefined before the first read. */
  groupVersion(): string | undefined;
  stop(): void;
}

interface Bundle {
  metadata: { name: string; labels?: Record<string, string> };
  spec?: { signerName?: string; trustBundle?: string };
}

interface Chosen {
  gv: string;
  reflector?: Reflector;
}

async function servesBundles(client: KubeClient, version: string): Promise<boolean> {
  try {
    const list = await client.request<{ resources?: { name?: string }[] }>({ path: `/apis/${GROUP}/${version}` });
    return (list?.resources ?? []).some((r) => r.name === "clustertrustbundles");
  } catch (e) {
    if (isNotFound(e)) return false;
    throw e;
  }
}

export function createTrustBundleManager(opts: TrustBundleManagerOptions): TrustBundleManager {
  const salt = opts.salt ?? randomUUID();
  let chosen: Chosen | undefined;
  let choosing: Promise<Chosen> | undefined;
  let stopped = false;

  async function choose(): Promise<Chosen> {
    const client = opts.client();
    if (!client) throw new Error("no kubeClient defined");
    for (const v of VERSIONS) {
      let ok: boolean;
      try {
        ok = await servesBundles(client, v);
      } catch (e) {
        throw new Error(`failed to determine which informer manager to choose: ${(e as Error).message}`);
      }
      if (!ok) continue;
      const gv = `${GROUP}/${v}`;
      const reflector = startReflector({ client: opts.client, path: `/apis/${gv}/clustertrustbundles`, clock: opts.clock, kind: "ClusterTrustBundle" });
      if (stopped) reflector.stop();
      log.info(`Started ClusterTrustBundle informer ${kv({ apiGroup: gv })}`);
      const synced = await reflector.waitForSync(opts.syncTimeoutMs ?? 10_000);
      log.info(synced ? "ClusterTrustBundle informer synced" : "ClusterTrustBundle informer not synced, continuing to attempt in background");
      return { gv, reflector };
    }
    log.info("No version of the ClusterTrustBundle API was found, the ClusterTrustBundle informer won't be started");
    return { gv: "none" };
  }

  /** The synced reflector, or upstream's error; the choice is made once (a failed discovery is retried). */
  async function reflector(): Promise<Reflector> {
    if (!opts.enabled) throw new Error(NOT_SUPPORTED);
    if (!chosen) {
      choosing ??= choose().finally(() => (choosing = undefined));
      try {
        chosen = await choosing;
      } catch (e) {
        throw new Error(`failed to ensure informer manager for ClusterTrustBundles: ${(e as Error).message}`);
      }
    }
    if (!chosen.reflector) throw new Error(NOT_SUPPORTED);
    if (!chosen.reflector.synced()) throw new Error("ClusterTrustBundle informer has not yet synced");
    return chosen.reflector;
  }

  const anchors = (bundles: Bundle[]) =>
    normalizeTrustAnchors(
      bundles.map((b) => b.spec?.trustBundle ?? ""),
      salt,
    );

  return {
    async getTrustAnchorsByName(name, allowMissing) {
      const r = await reflector();
      const b = r.objects.get(name) as Bundle | undefined;
      if (!b) {
        if (allowMissing) return "";
        // The lister's NotFound (GroupResource clustertrustbundle.certificates.k8s.io).
        throw new Error(`while getting ClusterTrustBundle: clustertrustbundle.${GROUP} "${name}" not found`);
      }
      return anchors([b]);
    },
    async getTrustAnchorsBySigner(signerName, labelSelector, allowMissing) {
      const r = await reflector();
      let match;
      try {
        match = labelSelectorMatcher(labelSelector);
      } catch (e) {
        throw new Error(`while parsing label selector: ${(e as Error).message}`);
      }
      const selected = ([...r.objects.values()] as Bundle[]).filter((b) => match(b.metadata.labels) && b.spec?.signerName === signerName);
      if (selected.length === 0) {
        if (allowMissing) return "";
        throw new Error("combination of signerName and labelSelector matched zero ClusterTrustBundles");
      }
      return anchors(selected);
    },
    groupVersion: () => chosen?.gv,
    stop() {
      stopped = true;
      chosen?.reflector?.stop();
    },
  };
}
