// The real API server's request log, for tests that assert on what a node asks: kube-apiserver's audit
// log (--audit-policy-file, --audit-log-path) with a policy that records every request of the group
// system:nodes once answered — verb, URI, user, the object — with the body of the pod deletes (the
// DeleteOptions with their preconditions) and pod status patches. Other users' requests are not recorded.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** One audit.k8s.io/v1 Event, the fields the tests read. */
export interface AuditEvent {
  stage: string;
  verb: string;
  requestURI: string;
  user: { username: string; groups?: string[] };
  objectRef?: { resource?: string; namespace?: string; name?: string; apiGroup?: string };
  responseStatus?: { code?: number };
  requestObject?: any;
  requestReceivedTimestamp: string;
}

const POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - { level: Request, userGroups: ["system:nodes"], verbs: [delete, patch], resources: [{ group: "", resources: [pods, pods/status] }] }
  - { level: Metadata, userGroups: ["system:nodes"] }
  - { level: None }
`;

export interface NodeAuditLog {
  /** The kube-apiserver flags (startControlPlane's apiserverFlags). */
  flags: string[];
  /** Every event logged so far, oldest first. */
  events(): AuditEvent[];
}

/** Writes the policy under `dir` (the control plane's directory: removed with it) and names the log there. */
export function nodeAuditLog(dir: string): NodeAuditLog {
  mkdirSync(dir, { recursive: true });
  const policy = join(dir, "audit-policy.yaml");
  const log = join(dir, "audit.log");
  writeFileSync(policy, POLICY);
  return {
    flags: [`--audit-policy-file=${policy}`, `--audit-log-path=${log}`, "--audit-log-maxbackup=1"],
    events: () =>
      existsSync(log)
        ? readFileSync(log, "utf8")
            .split("\n")
            .filter(Boolean)
            .map((l) => JSON.parse(l) as AuditEvent)
        : [],
  };
}
