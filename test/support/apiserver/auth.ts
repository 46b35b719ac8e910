// Authentication as kube-apiserver configures it on a kubeadm cluster: x509 client certificates
// (user = CN, groups = O) verified against the cluster CA, bearer tokens (an admin token for
// kubectl in tests), and bootstrap tokens "<id>.<secret>" (user system:bootstrap:<id>, group
// system:bootstrappers). Authorization is the part of RBAC + the Node authorizer the kubelet meets:
// masters may do anything, bootstrappers only create/read CSRs, nodes may not approve CSRs.
import type { TLSSocket } from "node:tls";
import type { ResourceDef } from "./resources.ts";
import { forbidden, unauthorized } from "./status.ts";

export interface User {
  name: string;
  groups: string[];
  uid?: string;
}

export interface AuthConfig {
  adminToken: string;
  /** "<id>.<secret>" bootstrap tokens accepted. */
  bootstrapTokens: Set<string>;
}

export function authenticate(socket: TLSSocket, authorization: string | undefined, cfg: AuthConfig): User {
  const bearer = /^Bearer\s+(\S+)$/i.exec(authorization ?? "")?.[1];
  if (bearer) {
    if (bearer === cfg.adminToken) return { name: "kubernetes-admin", groups: ["system:masters", "system:authenticated"] };
    const m = /^([a-z0-9]{6})\.([a-z0-9]{16})$/.exec(bearer);
    if (m && cfg.bootstrapTokens.has(bearer)) {
      return { name: `system:bootstrap:${m[1]}`, groups: ["system:bootstrappers", "system:bootstrappers:kubeadm:default-node-token", "system:authenticated"] };
    }
    throw unauthorized();
  }
  if (socket.authorized) {
    const subject = socket.getPeerCertificate()?.subject as { CN?: string; O?: string | string[] } | undefined;
    if (subject?.CN) {
      const orgs = subject.O === undefined ? [] : Array.isArray(subject.O) ? subject.O : [subject.O];
      return { name: subject.CN, groups: [...orgs, "system:authenticated"] };
    }
  }
  throw unauthorized();
}

export function authorize(user: User, verb: string, d: ResourceDef | undefined, ns: string, name?: string, sub?: string): void {
  if (user.groups.includes("system:masters") || !d) return;
  const isCsr = d.resource === "certificatesigningrequests";
  if (user.groups.includes("system:bootstrappers")) {
    if (isCsr && !sub && ["create", "get", "list", "watch"].includes(verb)) return;
  } else if (user.groups.includes("system:nodes")) {
    if (!(isCsr && sub === "approval")) return;
  }
  throw forbidden(user.name, verb, d, ns, name, sub);
}
