// Hostile inputs shared by the hardening tests: a YAML alias bomb ("billion laughs") that
// expands to 9^6 scalars if a decoder resolves aliases without a limit.
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
