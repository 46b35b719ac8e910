// CSI driver versions (upstream k8s.io/apimachinery/pkg/util/version ParseGeneric and
// HighestSupportedVersion, as the CSI registration handler uses them): two or more dot-separated
// numbers, an optional leading "v", anything after the numbers ignored; the highest v1.x is taken.

/** A generic version: its numeric components (what follows them plays no part). */
export interface GenericVersion {
  components: number[];
}

const VERSION_MATCH = /^\s*v?([0-9]+(?:\.[0-9]+)*)(.*)$/;

/** Go's %q of a string (JSON's quoting is the same for the printable ASCII versions carry). */
export const goQuote = (s: string) => JSON.stringify(s);

/** Upstream ParseGeneric, with its error texts. */
export function parseGeneric(str: string): GenericVersion {
  const parts = VERSION_MATCH.exec(str);
  if (!parts) throw new Error(`could not parse ${goQuote(str)} as version`);
  const components = parts[1]!.split(".");
  if (components.length < 2) throw new Error(`illegal version string ${goQuote(str)}`);
  if (components[0]!.startsWith("0") && components[0] !== "0")
    throw new Error(`illegal zero-prefixed version component ${goQuote(components[0]!)} in ${goQuote(str)}`);
  return { components: components.map(Number) };
}

export const versionString = (v: GenericVersion) => v.components.join(".");

/** -1, 0 or 1 (upstream compareInternal of two generic versions: trailing zeros do not count). */
export function compareVersions(a: GenericVersion, b: GenericVersion): number {
  const n = Math.max(a.components.length, b.components.length);
  for (let i = 0; i < n; i++) {
    const x = a.components[i] ?? 0;
    const y = b.components[i] ?? 0;
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

const major = (v: GenericVersion) => v.components[0]!;

/** Upstream HighestSupportedVersion: the highest version of major 1, with its error texts. */
export function highestSupportedVersion(versions: string[]): GenericVersion {
  if (versions.length === 0) throw new Error("empty array for supported versions");
  let highest: GenericVersion | undefined;
  let theErr: Error | undefined;
  for (let i = versions.length - 1; i >= 0; i--) {
    let v: GenericVersion;
    try {
      v = parseGeneric(versions[i]!);
    } catch (e) {
      theErr = e as Error;
      continue;
    }
    if (major(v) > 1) continue;
    if (!highest || compareVersions(highest, v) < 0) highest = v;
  }
  if (!highest) throw new Error(`could not find a highest supported version from versions ([${versions.join(" ")}]) reported: ${theErr?.message ?? "<nil>"}`);
  if (major(highest) !== 1) throw new Error(`highest supported version reported is ${versionString(highest)}, must be v1.x`);
  return highest;
}
