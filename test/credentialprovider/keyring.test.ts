import { describe, expect, test } from "bun:test";
import {
  createDockerKeyring,
  dockerConfigsFromSecrets,
  globMatch,
  keyringKey,
  parseDockerConfigJson,
  repositoryOf,
  urlsMatch,
} from "../../src/credentialprovider/index.ts";

const b64 = (s: string) => Buffer.from(s).toString("base64");
const cfg = (entries: Record<string, string>) =>
  Object.fromEntries(Object.entries(entries).map(([k, user]) => [k, { username: user, password: `${user}-pw` }]));

describe("repositoryOf (docker reference normalization, tag and digest dropped)", () => {
  test.each([
    ["busybox", "docker.io/library/busybox"],
    ["busybox:1.36", "docker.io/library/busybox"],
    ["team/app@sha256:abc", "docker.io/team/app"],
    ["index.docker.io/team/app", "docker.io/team/app"],
    ["registry.example.com:5000/a/b:v1", "registry.example.com:5000/a/b"],
    ["localhost/x", "localhost/x"],
  ])("%s → %s", (image, want) => expect(repositoryOf(image)).toBe(want));
});

describe("keyring keys and matching (upstream keyring_test cases)", () => {
  test.each([
    ["https://index.docker.io/v1/", "index.docker.io"],
    ["registry.example.com", "registry.example.com"],
    ["http://registry.example.com/v2/", "registry.example.com"],
    ["registry.example.com/team", "registry.example.com/team"],
  ])("key of %s is %s", (loc, key) => expect(keyringKey(loc)).toBe(key));

  test.each([
    ["*.kubernetes.io", "prefix.kubernetes.io", true],
    ["*.kubernetes.io", "kubernetes.io", false],
    ["*-good.kubernetes.io", "prefix-good.kubernetes.io", true],
    ["*.*.kubernetes.io", "a.b.kubernetes.io", true],
    ["prefix.*.io", "prefix.kubernetes.io", true],
    ["*.kubernetes.io:1111", "prefix.kubernetes.io:1111", true],
    ["*.kubernetes.io:1111", "prefix.kubernetes.io:1112", false],
    ["kubernetes.io/foo", "kubernetes.io/foo/bar", true],
    ["kubernetes.io/foo/bar", "kubernetes.io/foo", false],
    ["k8s.io", "kubernetes.io", false],
  ])("%s vs %s → %s", (glob, target, want) => expect(urlsMatch(glob, target)).toBe(want));

  test("globMatch: ?, classes", () => {
    expect(globMatch("reg?", "reg1")).toBe(true);
    expect(globMatch("reg[0-9]", "reg7")).toBe(true);
    expect(globMatch("reg[0-9]", "regx")).toBe(false);
  });

  test("most specific key first; docker.io images fall back to index.docker.io", () => {
    const ring = createDockerKeyring([cfg({ "registry.example.com": "host", "registry.example.com/team": "team", "https://index.docker.io/v1/": "hub" })]);
    expect(ring.lookup("registry.example.com/team/app:1").map((a) => a.username)).toEqual(["team", "host"]);
    expect(ring.lookup("registry.example.com/other/app").map((a) => a.username)).toEqual(["host"]);
    expect(ring.lookup("busybox").map((a) => a.username)).toEqual(["hub"]);
    expect(ring.lookup("quay.io/x/y")).toEqual([]);
  });

  test("several pull secrets for one registry: all credentials, in order", () => {
    const ring = createDockerKeyring([cfg({ "r.example.com": "a" }), cfg({ "r.example.com": "b" })]);
    expect(ring.lookup("r.example.com/x").map((a) => a.username)).toEqual(["a", "b"]);
  });
});

describe("pull secret parsing", () => {
  test("dockerconfigjson: auth wins over username/password", () => {
    const c = parseDockerConfigJson(JSON.stringify({ auths: { "r.example.com": { username: "x", password: "y", auth: b64("u:p:w") } } }));
    expect(c["r.example.com"]).toEqual({ username: "u", password: "p:w" });
  });

  test("both secret formats; a bad one is reported by name and skipped", () => {
    const errors: string[] = [];
    const configs = dockerConfigsFromSecrets(
      [
        { name: "json", data: { ".dockerconfigjson": b64(JSON.stringify({ auths: { "a.example.com": { auth: b64("a:1") } } })) } },
        { name: "legacy", data: { ".dockercfg": b64(JSON.stringify({ "b.example.com": { username: "b", password: "2" } })) } },
        { name: "broken", data: { ".dockerconfigjson": b64(JSON.stringify({ auths: { "c.example.com": { auth: b64("nocolon") } } })) } },
        { name: "opaque", data: { token: b64("x") } },
      ],
      (e) => errors.push(e.message),
    );
    expect(configs).toEqual([{ "a.example.com": { username: "a", password: "1" } }, { "b.example.com": { username: "b", password: "2" } }]);
    expect(errors).toEqual([
      'secret "broken" .dockerconfigjson: registry "c.example.com": unable to parse auth field, must be formatted as base64(username:password)',
    ]);
  });
});
