// API pods for a scenario: the API-server double (test/support/apiserver, in-memory storage) as the
// node's control plane, bunlet joined to it with a node client certificate (--kubeconfig), and pods
// written to its store as a scheduler would bind them (spec.nodeName set). For what static pods cannot
// show: a static pod is critical (upstream's IsCriticalPod), so it never gets swap and is never ranked
// as an ordinary pod. Named `<name>-<node>` as static pods are, so the harness's h.pod(name) finds
// them; the double is closed at the harness's cleanup.
//   const api = await useApiPods(h);
//   await h.start({ allocatableBytes, extraArgs: api.kubeconfigArgs, waitRunning: [] });
//   await api.addPod("hog", { image: h.images.memhog, args: ["300"], requests: { memory: "128Mi" } });
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { computePodQOS } from "../../../src/pod/qos.ts";
import type { Pod } from "../../../src/pod/types.ts";
import { startApiServer, type ApiServerDouble } from "../../../test/support/apiserver/index.ts";
import type { Harness } from "./harness.ts";
import { podManifest, type PodSpecInput } from "./pods.ts";

export interface ApiPods {
  readonly api: ApiServerDouble;
  /** bunlet's flags to join the double. */
  readonly kubeconfigArgs: string[];
  /** Binds a pod to this node (status Pending, its QoS class computed as the API server does). */
  addPod(name: string, spec: PodSpecInput): Promise<void>;
  /** The pod as the API server has it (the status bunlet wrote). */
  apiPod(name: string): Promise<Pod | undefined>;
}

/** Starts the double for this harness, writes the node's kubeconfig, and has the harness ask bunlet over TLS. */
export async function useApiPods(h: Harness): Promise<ApiPods> {
  const api = await startApiServer({ storage: "memory" });
  h.defer(() => api.close());
  const kubeconfig = join(h.dir, "kubelet.kubeconfig");
  await api.writeKubeconfig(kubeconfig, { ...(await api.issueClientCert(`system:node:${h.nodeName}`, ["system:nodes"])), user: "kubelet" });
  h.authenticateWith(api.adminToken);
  const key = (name: string) => `pods/default/${h.podName(name)}`;
  return {
    api,
    kubeconfigArgs: [`--kubeconfig=${kubeconfig}`],
    async addPod(name, spec) {
      const m = podManifest(h.podName(name), spec, h.images) as Pod;
      const pod = {
        ...m,
        metadata: { ...m.metadata, namespace: "default", uid: randomUUID(), creationTimestamp: new Date().toISOString() },
        spec: { ...m.spec, nodeName: h.nodeName },
        status: { phase: "Pending", qosClass: computePodQOS(m) },
      };
      const r = await api.store.put(key(name), pod);
      if (r === "conflict") throw new Error(`${key(name)} already exists`);
    },
    apiPod: async (name) => (await api.store.get(key(name))) as Pod | undefined,
  };
}
