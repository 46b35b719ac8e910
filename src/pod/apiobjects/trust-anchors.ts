// upstream clustertrustbundle normalizeTrustAnchors: every PEM block of the selected bundles,
// deduplicated by its DER bytes, written back as CERTIFICATE blocks (64-column base64, as Go's
// pem.EncodeToMemory). Upstream shuffles the list "to give it a stable ordering that changes each
// time Kubelet restarts"; here the order is the blocks sorted by a hash of a per-process salt and
// their bytes — the same order for the same set within one run (no file rewrite while nothing
// changed), a different one after a restart, so no consumer comes to rely on one order.
import { createHash } from "node:crypto";

const PEM_BLOCK = /-----BEGIN ([^-\r\n]+)-----\r?\n([\s\S]*?)-----END \1-----/g;

/** The DER bytes (base64) of each PEM block in `pem`; headers ("Proc-Type: …") are skipped. */
export function pemBlocks(pem: string): string[] {
  const out: string[] = [];
  for (const m of pem.matchAll(PEM_BLOCK)) {
    const body = m[2]!
      .split(/\r?\n/)
      .filter((l) => !l.includes(":"))
      .join("")
      .replace(/\s+/g, "");
    out.push(Buffer.from(body, "base64").toString("base64"));
  }
  return out;
}

const wrap64 = (b64: string) => b64.match(/.{1,64}/g)?.join("\n") ?? "";

/** The normalized PEM of the trust anchors in `bundles` (deduplicated, ordered by `salt`). */
export function normalizeTrustAnchors(bundles: readonly string[], salt: string): string {
  const unique = [...new Set(bundles.flatMap(pemBlocks))];
  const rank = new Map(unique.map((b) => [b, createHash("sha256").update(salt).update(b).digest("hex")]));
  unique.sort((a, b) => (rank.get(a)! < rank.get(b)! ? -1 : rank.get(a)! > rank.get(b)! ? 1 : 0));
  return unique.map((b) => `-----BEGIN CERTIFICATE-----\n${wrap64(b)}\n-----END CERTIFICATE-----\n`).join("");
}
