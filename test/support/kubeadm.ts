// kubeadm's four control-plane static pod manifests (test/fixtures/kubeadm, images swapped for the
// local ones) and what a test needs around them: every hostPath moved under a temporary root, and the
// files kubeadm's earlier phases would have written (etcd's PKI, kubeconfigs, a 0700 etcd data dir).
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { parseDocument } from "yaml";

export const KUBEADM_FIXTURES = resolve(import.meta.dir, "../fixtures/kubeadm");
export const KUBEADM_COMPONENTS = ["etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"] as const;
/** The node name and advertise address the fixtures were generated for. */
export const KUBEADM_NODE = { name: "kubeadm-cp", address: "127.0.0.2" };

export function kubeadmManifest(component: (typeof KUBEADM_COMPONENTS)[number]): string {
  return readFileSync(join(KUBEADM_FIXTURES, `${component}.yaml`), "utf8");
}

/**
 * The manifest with every spec.volumes[].hostPath.path prefixed by `hostRoot` (the only change), so a
 * test never creates or mounts the host's /etc/kubernetes, /var/lib/etcd or /usr/libexec/kubernetes.
 */
export function withHostPathsUnder(text: string, hostRoot: string): string {
  const doc = parseDocument(text);
  const volumes = doc.getIn(["spec", "volumes"]) as { items: unknown[] } | undefined;
  for (let i = 0; i < (volumes?.items.length ?? 0); i++) {
    const path = doc.getIn(["spec", "volumes", i, "hostPath", "path"]);
    if (typeof path === "string") doc.setIn(["spec", "volumes", i, "hostPath", "path"], join(hostRoot, path));
  }
  return doc.toString();
}

async function openssl(args: string[], cwd: string): Promise<void> {
  const p = Bun.spawn(["openssl", ...args], { cwd, stdout: "ignore", stderr: "pipe" });
  const [code, err] = await Promise.all([p.exited, new Response(p.stderr).text()]);
  if (code !== 0) throw new Error(`openssl ${args.join(" ")}: ${err}`);
}

/**
 * What `kubeadm init` writes before the control-plane phase, under `hostRoot`: etcd's CA, server and
 * peer certificates (/etc/kubernetes/pki/etcd), the etcd data dir with mode 0700 as kubeadm makes it,
 * and placeholder kubeconfigs for the controller-manager and the scheduler (FileOrCreate does not
 * create parent directories, and kubeadm writes them first).
 */
export async function prepareKubeadmHost(hostRoot: string): Promise<void> {
  const pki = join(hostRoot, "etc/kubernetes/pki/etcd");
  mkdirSync(pki, { recursive: true });
  mkdirSync(join(hostRoot, "var/lib/etcd"), { recursive: true, mode: 0o700 });
  for (const f of ["controller-manager.conf", "scheduler.conf"]) {
    const p = join(hostRoot, "etc/kubernetes", f);
    mkdirSync(dirname(p), { recursive: true });
    writeFileSync(p, "apiVersion: v1\nkind: Config\n");
  }
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
  await openssl(["req", "-x509", ...ec, "-keyout", "ca.key", "-out", "ca.crt", "-days", "1", "-subj", "/CN=etcd-ca"], pki);
  const san = `subjectAltName=DNS:localhost,DNS:${KUBEADM_NODE.name},IP:127.0.0.1,IP:${KUBEADM_NODE.address}\nextendedKeyUsage=serverAuth,clientAuth\n`;
  writeFileSync(join(pki, "san.ext"), san);
  for (const name of ["server", "peer"]) {
    await openssl(["req", ...ec, "-keyout", `${name}.key`, "-out", `${name}.csr`, "-subj", `/CN=${KUBEADM_NODE.name}`], pki);
    await openssl(
      [
        "x509",
        "-req",
        "-in",
        `${name}.csr`,
        "-CA",
        "ca.crt",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-days",
        "1",
        "-extfile",
        "san.ext",
        "-out",
        `${name}.crt`,
      ],
      pki,
    );
  }
}
