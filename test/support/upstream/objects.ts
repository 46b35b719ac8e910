// The objects `kubeadm init` writes so that nodes can join with a bootstrap token (kubeadm's
// phases/bootstraptoken/node: the token Secret, the kubelet-bootstrap binding and the two CSR
// auto-approval bindings), a token whose CSRs an administrator approves, and kubeconfig text. Pure:
// text in, text out.
import { randomBytes } from "node:crypto";
import { stringify } from "yaml";

export interface BootstrapToken {
  id: string;
  secret: string;
}

const TOKEN_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789";

/** A bootstrap token as `kubeadm token generate` makes one: [a-z0-9]{6}.[a-z0-9]{16}. */
export function randomToken(): BootstrapToken {
  const pick = (n: number) => [...randomBytes(n)].map((b) => TOKEN_CHARS[b % TOKEN_CHARS.length]).join("");
  return { id: pick(6), secret: pick(16) };
}

/** kubeadm's group for nodes that join with its default token. */
export const BOOTSTRAP_GROUP = "system:bootstrappers:kubeadm:default-node-token";

function binding(name: string, role: string, group: string): object {
  return {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRoleBinding",
    metadata: { name },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: role },
    subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: group }],
  };
}

/** A bootstrap token's Secret: the token authenticates as system:bootstrap:<id>, in system:bootstrappers and `group`. */
function tokenSecret(token: BootstrapToken, group: string): object {
  return {
    apiVersion: "v1",
    kind: "Secret",
    type: "bootstrap.kubernetes.io/token",
    metadata: { name: `bootstrap-token-${token.id}`, namespace: "kube-system" },
    stringData: {
      "token-id": token.id,
      "token-secret": token.secret,
      "usage-bootstrap-authentication": "true",
      "usage-bootstrap-signing": "true",
      "auth-extra-groups": group,
    },
  };
}

const yamlDocs = (docs: object[]) => docs.map((d) => stringify(d)).join("---\n");

/** The token Secret and kubeadm's three bindings, as one multi-document YAML for `kubectl apply -f -`. */
export function bootstrapObjects(token: BootstrapToken): string {
  return yamlDocs([
    tokenSecret(token, BOOTSTRAP_GROUP),
    binding("kubeadm:kubelet-bootstrap", "system:node-bootstrapper", BOOTSTRAP_GROUP),
    binding("kubeadm:node-autoapprove-bootstrap", "system:certificates.k8s.io:certificatesigningrequests:nodeclient", BOOTSTRAP_GROUP),
    binding("kubeadm:node-autoapprove-certificate-rotation", "system:certificates.k8s.io:certificatesigningrequests:selfnodeclient", "system:nodes"),
  ]);
}

/** kubeadm's own group left aside: a token in this group may ask for a certificate, and an administrator approves it. */
export const MANUAL_APPROVAL_GROUP = "system:bootstrappers:manual-approval";

/**
 * A bootstrap token whose node client CSRs wait for an administrator: its Secret in MANUAL_APPROVAL_GROUP
 * and the binding to system:node-bootstrapper alone — no nodeclient binding, so the controller-manager's
 * csrapproving controller leaves its CSRs pending (`kubectl certificate approve` or `deny` decides).
 */
export function manualApprovalTokenObjects(token: BootstrapToken): string {
  return yamlDocs([tokenSecret(token, MANUAL_APPROVAL_GROUP), binding("manual-approval:kubelet-bootstrap", "system:node-bootstrapper", MANUAL_APPROVAL_GROUP)]);
}

/** A kubeconfig for one cluster and one user (its fields as client-go names them). */
export function kubeconfigYaml(server: string, caPem: string, user: Record<string, string>): string {
  return stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: "upstream", cluster: { server, "certificate-authority-data": Buffer.from(caPem).toString("base64") } }],
    users: [{ name: "user", user }],
    contexts: [{ name: "upstream", context: { cluster: "upstream", user: "user" } }],
    "current-context": "upstream",
  });
}
