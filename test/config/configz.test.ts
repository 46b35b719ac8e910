import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "yaml";
import { configz, loadConfig, renderConfig } from "../../src/config/load.ts";

const FIXTURE = join(import.meta.dir, "fixtures", "kubeadm-config.yaml");
let dir = "";
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), `bunlet-configz-${process.pid}-`));
});
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("/configz", () => {
  test("shaped as the kubelet's: kubeletconfig, v1beta1 names, Go omitempty, Go durations", async () => {
    const { config } = await loadConfig(["--config", FIXTURE]);
    const body = configz(config);
    expect(Object.keys(body)).toEqual(["kubeletconfig"]);
    const kc = body.kubeletconfig;
    expect(kc.apiVersion).toBeUndefined();
    expect(kc.kind).toBeUndefined();
    // Upstream order starts with enableServer, staticPodPath, podLogsDir, syncFrequency.
    expect(Object.keys(kc).slice(0, 4)).toEqual(["enableServer", "staticPodPath", "podLogsDir", "syncFrequency"]);
    expect(kc).toMatchObject({
      enableServer: true,
      syncFrequency: "1m0s",
      streamingConnectionIdleTimeout: "4h0m0s",
      authentication: { x509: { clientCAFile: "/etc/kubernetes/pki/ca.crt" }, webhook: { enabled: true, cacheTTL: "2m0s" }, anonymous: { enabled: false } },
      authorization: { mode: "Webhook", webhook: { cacheAuthorizedTTL: "5m0s", cacheUnauthorizedTTL: "30s" } },
      evictionHard: {
        "memory.available": "100Mi",
        "nodefs.available": "10%",
        "nodefs.inodesFree": "5%",
        "imagefs.available": "15%",
        "imagefs.inodesFree": "5%",
      },
      enableSystemLogQuery: false, // pointer field: printed even when false
      memorySwap: {}, // non-pointer struct: always printed
      imageMaximumGCAge: "0s", // metav1.Duration: always printed
      logging: { format: "text", flushFrequency: "5s", verbosity: 0, options: { text: { infoBufferSize: "0" }, json: { infoBufferSize: "0" } } },
      containerRuntimeEndpoint: "unix:///run/containerd/containerd.sock",
    });
    // omitempty zero values are left out, as the kubelet leaves them out.
    for (const k of [
      "readOnlyPort",
      "evictionSoft",
      "evictionMaxPodGracePeriod",
      "kernelMemcgNotification",
      "cgroupRoot",
      "staticPodURL",
      "imageServiceEndpoint",
      "featureGates",
      "evictStaticPods",
    ]) {
      expect(kc).not.toHaveProperty(k);
    }
  });

  test("set values appear, including bunlet's extension", async () => {
    const { config } = await loadConfig(["--read-only-port=10255", "--evict-static-pods", "--feature-gates=A=true"]);
    const kc = configz(config).kubeletconfig;
    expect(kc.readOnlyPort).toBe(10255);
    expect(kc.evictStaticPods).toBe(true);
    expect(kc.featureGates).toEqual({ A: true });
  });
});

describe("renderConfig (bunlet config print)", () => {
  test.each(["yaml", "json"] as const)("%s starts with apiVersion and kind and loads back to the same config", async (format) => {
    const first = await loadConfig(["--config", FIXTURE, "--eviction-hard=memory.available<500Mi", "--max-pods=30", "--system-reserved=memory=1Gi"]);
    const text = renderConfig(first.config, format);
    const doc = format === "json" ? JSON.parse(text) : parse(text);
    expect(Object.keys(doc).slice(0, 2)).toEqual(["apiVersion", "kind"]);
    if (format === "yaml") expect(text.startsWith("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n")).toBe(true);
    const p = join(dir, `printed.${format}`);
    writeFileSync(p, text);
    const again = await loadConfig(["--config", p]);
    expect(again.config).toEqual(first.config);
  });
});
