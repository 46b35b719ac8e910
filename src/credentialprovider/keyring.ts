// The docker keyring (upstream pkg/credentialprovider keyring.go BasicDockerKeyring): registry keys
// ("registry.example.com", "*.example.com/team", "https://index.docker.io/v1/") become schemeless
// host[/path] keys; an image matches a key when the port is equal, the host has as many dot parts,
// each part matches the key's glob (filepath.Match) and the image path starts with the key's path.
// Keys are tried most specific first (reverse-sorted); docker.io images fall back to the default
// registry's (index.docker.io) credentials.
import type { DockerConfig, DockerConfigEntry } from "./dockerconfig.ts";

/**
 * The credentials the keyring gives for an image (upstream credentialprovider.AuthConfig, of which a
 * docker config fills the user name and password): the CRI's AuthConfig takes them as they are.
 */
export type AuthConfig = Pick<DockerConfigEntry, "username" | "password">;

const DEFAULT_REGISTRY_HOST = "index.docker.io";

interface SchemelessUrl {
  host: string;
  path: string;
}

/** upstream ParseSchemelessURL: host up to the first "/", the rest is the path (scheme dropped). */
function parseSchemeless(s: string): SchemelessUrl {
  const i = s.indexOf("/");
  return i < 0 ? { host: s, path: "" } : { host: s.slice(0, i), path: s.slice(i) };
}

function splitHost(host: string): { parts: string[]; port: string } {
  const m = /^(.*):(\d*)$/.exec(host);
  const h = m && !host.startsWith("[") ? m[1]! : host;
  return { parts: h.split("."), port: m && !host.startsWith("[") ? m[2]! : "" };
}

/** Go's filepath.Match for one host part (no separators inside): *, ?, [class], \escape. */
export function globMatch(pattern: string, name: string): boolean {
  let re = "^";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === "*") re += "[^/]*";
    else if (c === "?") re += "[^/]";
    else if (c === "[") {
      const end = pattern.indexOf("]", i + 1);
      if (end < 0) return false; // ErrBadPattern: no match
      let cls = pattern.slice(i + 1, end);
      if (cls.startsWith("^")) cls = `^${cls.slice(1)}`;
      re += `[${cls.replace(/\\/g, "\\\\")}]`;
      i = end;
    } else if (c === "\\" && i + 1 < pattern.length) re += `\\${pattern[++i]}`;
    else re += c.replace(/[.+^${}()|\]\\]/g, "\\$&");
  }
  try {
    return new RegExp(`${re}$`).test(name);
  } catch {
    return false;
  }
}

/** upstream URLsMatch over schemeless URLs. */
export function urlsMatch(globKey: string, target: string): boolean {
  const g = parseSchemeless(globKey);
  const t = parseSchemeless(target);
  const gh = splitHost(g.host);
  const th = splitHost(t.host);
  if (gh.port !== th.port || gh.parts.length !== th.parts.length) return false;
  if (!t.path.startsWith(g.path)) return false;
  return gh.parts.every((p, i) => globMatch(p, th.parts[i]!));
}

/** upstream keyring key of a config location: scheme dropped, /v1/ and /v2/ prefixes equal the host. */
export function keyringKey(location: string): string {
  const u = parseSchemeless(location.replace(/^https?:\/\//, ""));
  let path = u.path;
  if (path.startsWith("/v2/") || path.startsWith("/v1/")) path = path.slice(3);
  return path.length > 0 && path !== "/" ? u.host + path : u.host;
}

/** docker's default-registry test (upstream isDefaultRegistryMatch). */
export function isDefaultRegistryMatch(image: string): boolean {
  const [first, ...rest] = image.split("/");
  if (!first) return false;
  if (rest.length === 0) return true;
  if (first === "docker.io" || first === "index.docker.io") return true;
  return !/[.:]/.test(first);
}

/**
 * The repository of an image reference, normalized as docker's reference package does
 * (busybox → docker.io/library/busybox), without tag or digest — what the keyring is asked about.
 */
export function repositoryOf(image: string): string {
  let name = image.split("@")[0]!;
  const slash = name.lastIndexOf("/");
  const colon = name.lastIndexOf(":");
  if (colon > slash) name = name.slice(0, colon);
  const i = name.indexOf("/");
  const first = i < 0 ? "" : name.slice(0, i);
  let domain: string;
  let rest: string;
  if (i < 0 || !(first.includes(".") || first.includes(":") || first === "localhost" || first !== first.toLowerCase())) {
    domain = "docker.io";
    rest = name;
  } else {
    domain = first;
    rest = name.slice(i + 1);
  }
  if (domain === "index.docker.io") domain = "docker.io";
  if (domain === "docker.io" && !rest.includes("/")) rest = `library/${rest}`;
  return `${domain}/${rest}`;
}

export interface DockerKeyring {
  /** Credentials for an image repository, most specific key first; [] = pull anonymously. */
  lookup(image: string): AuthConfig[];
}

/** upstream BasicDockerKeyring built from the configs of a pod's pull secrets, in order. */
export function createDockerKeyring(configs: readonly DockerConfig[]): DockerKeyring {
  const creds = new Map<string, AuthConfig[]>();
  for (const cfg of configs) {
    for (const [location, e] of Object.entries(cfg)) {
      const key = keyringKey(location);
      const list = creds.get(key) ?? [];
      list.push({ username: e.username, password: e.password });
      creds.set(key, list);
    }
  }
  // Reverse-sorted so a longer (more specific) path is tried before its prefix.
  const index = [...creds.keys()].sort().reverse();
  return {
    lookup(image) {
      const repo = repositoryOf(image);
      const out = index.filter((k) => urlsMatch(k, repo)).flatMap((k) => creds.get(k)!);
      if (out.length > 0) return out;
      if (isDefaultRegistryMatch(repo)) return creds.get(DEFAULT_REGISTRY_HOST) ?? [];
      return [];
    },
  };
}
