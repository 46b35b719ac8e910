// Hostile inputs shared by the hardening tests: a YAML alias bomb ("billion laughs") that expands
// to 9^6 scalars if a decoder resolves aliases without a limit; and generators of hostile API-object
// fields (paths, UIDs, forged annotations) for the pod security suite.
import type { Rand } from "./rand.ts";

export const aliasBomb = [
  `a: &a ["x","x","x","x","x","x","x","x","x"]`,
  `b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]`,
  `c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]`,
  `d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]`,
  `e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]`,
  `f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]`,
  "",
].join("\n");

export const podYaml = (name: string, image = "bunlet.local/busybox:1") =>
  `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\nspec:\n  containers:\n    - name: app\n      image: ${image}\n`;

// ---- generated hostile API objects (pod security suite) ----

/** Values a tenant could put in kubernetes.io/config.source to pass for a static pod. */
export const FORGED_SOURCES = ["file", "http", "File", "FILE", " file", "file ", "", "static", "kubelet", "file\u0000api", "api/../file"];

const TRAVERSALS = ["..", "../..", "../../..", "a/../..", "./..", "..//..", "x/./../../y"];
const TARGETS = ["etc", "etc/passwd", "root/.ssh/authorized_keys", "var/lib/kubelet/pki", "proc/self/root", "..data", "..2026_01_01"];

/** A path that escapes where it is joined, is absolute, or names the writer's own entries. */
export function hostileRelativePath(r: Rand): string {
  switch (r.int(6)) {
    case 0:
      return `${r.pick(TRAVERSALS)}/${r.pick(TARGETS)}`;
    case 1:
      return `/${r.pick(TARGETS)}`;
    case 2:
      return `ok/${r.pick(TRAVERSALS)}/${r.pick(TARGETS)}`;
    case 3:
      return r.pick(["..data", "..data/x", "..", "..x", "...", "..2026_01_01_00_00_00.1"]);
    case 4:
      return `${"a/".repeat(1 + r.int(3))}..`;
    default:
      return `${"d/".repeat(2100)}${r.pick(TARGETS)}`; // past 4096 characters
  }
}

/** A metadata.uid that is not one plain path component. */
export function hostileUid(r: Rand): string {
  switch (r.int(5)) {
    case 0:
      return `${r.pick(TRAVERSALS)}/${r.pick(TARGETS)}`;
    case 1:
      return `${r.int(1e6)}/${r.int(1e6)}`;
    case 2:
      return r.pick(["..", ".", "-rf", "a..b", "uid\u0000x", "uid\nx", " uid", "uid/"]);
    case 3:
      return "u".repeat(129 + r.int(1000));
    default:
      return `/${r.pick(TARGETS)}`;
  }
}
