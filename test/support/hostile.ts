// Hostile inputs shared by the hardening tests: a YAML alias bomb ("billion laughs") that expands to
// 9^6 scalars if a decoder resolves aliases without a limit; hostile HTTP requests for the kubelet
// port's streaming and log endpoints (generated from a seeded Rand, with the answers that are right
// for each); slow and half-open clients (sent by hostile-wire.ts); and generators of hostile
// API-object fields (paths, UIDs, forged annotations) for the pod security suite.
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

// ---- Hostile HTTP requests for the kubelet port, as raw bytes (no client library to tidy them up).

/** A request as bytes and the answers that are right for it (0 = the server closed without an answer). */
export interface HostileCase {
  what: string;
  bytes: Buffer;
  ok: readonly number[];
}

/** A request with Host and Connection: close, the given header lines, and a body with its length. */
export const REQ = (method: string, target: string, headers: string[] = [], body = "") =>
  Buffer.from(
    `${method} ${target} HTTP/1.1\r\nHost: kubelet\r\nConnection: close\r\n${headers.map((h) => `${h}\r\n`).join("")}${body ? `Content-Length: ${Buffer.byteLength(body)}\r\n` : ""}\r\n${body}`,
    "latin1",
  );
export const UPGRADE_SPDY = ["Connection: Upgrade", "Upgrade: SPDY/3.1", "X-Stream-Protocol-Version: v4.channel.k8s.io"];
export const UPGRADE_WS = [
  "Connection: Upgrade",
  "Upgrade: websocket",
  "Sec-WebSocket-Version: 13",
  "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
  "Sec-WebSocket-Protocol: v4.channel.k8s.io",
];

/** A pod the node knows (its logs are served), which the hostile requests must not disturb. */
export interface KnownPod {
  namespace: string;
  name: string;
  container: string;
}

const STREAM_PATHS = (ns: string, pod: string, c: string) => [
  `/exec/${ns}/${pod}/${c}?command=sh&input=1&output=1`,
  `/attach/${ns}/${pod}/${c}?output=1&error=1`,
  `/portForward/${ns}/${pod}?port=8080`,
];

/** Upgrade heads a hostile client would send to the streaming endpoints: each refused, none reaching a runtime. */
export function streamingUpgradeCases(r: Rand, n: number): HostileCase[] {
  const out: HostileCase[] = [];
  const connection = () => r.pick(["Upgrade", "upgrade", "UPGRADE", "keep-alive, Upgrade", `Upgrade, ${"x,".repeat(r.int(2000))}`, "close, upgrade"]);
  const upgrade = () => r.pick(["SPDY/3.1", "websocket", "WebSocket", "h2c", "spdy/2", "", "\u00ff\u00fe", "a".repeat(r.int(4000))]);
  for (let i = 0; i < n; i++) {
    const path = r.pick(STREAM_PATHS(r.pick(["default", "kube-system", "%2e%2e"]), `nope-${r.int(1e6)}`, r.pick(["c", "app", "%00"])));
    const method = path.startsWith("/portForward") || r.next() < 0.5 ? r.pick(["GET", "POST"]) : "POST";
    const kind = r.int(6);
    const base = [`Connection: ${connection()}`, `Upgrade: ${upgrade()}`];
    if (kind === 0)
      out.push({
        what: `upgrade variants on an unknown pod ${path.slice(0, 40)}`,
        bytes: REQ(method, path, [...base, "X-Stream-Protocol-Version: v4.channel.k8s.io"]),
        ok: [400, 404],
      });
    else if (kind === 1)
      out.push({
        what: "bare LF inside an upgrade header (a second header for a LF-splitting backend)",
        bytes: REQ(method, path, [...base, `X-Smuggle: a\nTransfer-Encoding: chunked`]),
        ok: [400],
      });
    else if (kind === 2)
      out.push({
        what: "obs-fold in an upgrade head",
        bytes: REQ(method, path, [...base, "X-Fold: a", ` ${r.pick(["Transfer-Encoding: chunked", "folded", "\tx"])}`]),
        ok: [400],
      });
    else if (kind === 3)
      out.push({
        what: "control bytes in an upgrade header",
        bytes: REQ(method, path, [...base, `X-Ctl: a${r.pick(["\x00", "\x01", "\r", "\x7f", "\x1b"])}b`]),
        ok: [400],
      });
    else if (kind === 4)
      out.push({ what: "huge upgrade head", bytes: REQ(method, path, [...base, `X-Big: ${"a".repeat((16 << 10) + r.int(2 << 20))}`]), ok: [431, 400, 0] });
    else
      out.push({
        what: "bare LF line ends in an upgrade head",
        bytes: Buffer.from(`${method} ${path} HTTP/1.1\nHost: k\nConnection: Upgrade\nUpgrade: SPDY/3.1\n\n`, "latin1"),
        ok: [400],
      });
  }
  return out;
}

/** /containerLogs and /logs requests with invalid options, unknown names and hostile paths. */
export function logsCases(r: Rand, n: number, pod: KnownPod): HostileCase[] {
  const out: HostileCase[] = [];
  const logs = `/containerLogs/${pod.namespace}/${pod.name}/${pod.container}`;
  const invalid: [string, number][] = [
    ["tailLines=-1", 422],
    ["limitBytes=0", 422],
    ["limitBytes=-5", 422],
    ["sinceSeconds=0", 422],
    ["sinceSeconds=1&sinceTime=2026-01-01T00:00:00Z", 422],
    ["tailLines=abc", 400],
    ["tailLines=1e3", 400],
    ["limitBytes=%00", 400],
    ["sinceTime=yesterday", 400],
    ["sinceTime=%zz", 400],
    ["sinceSeconds=99999999999999999999999x", 400],
  ];
  for (let i = 0; i < n; i++) {
    const kind = r.int(5);
    if (kind === 0) {
      const [q, status] = r.pick(invalid);
      out.push({ what: `containerLogs ?${q}`, bytes: REQ(r.pick(["GET", "HEAD"]), `${logs}?${q}${r.next() < 0.5 ? "&follow=true" : ""}`), ok: [status] });
    } else if (kind === 1)
      out.push({
        what: "containerLogs of an unknown container",
        bytes: REQ("GET", `/containerLogs/${pod.namespace}/${pod.name}/${r.pick(["nope", "..", "%2e%2e", pod.container + "x"])}?follow=true`),
        ok: [400, 404],
      });
    else if (kind === 2)
      out.push({
        what: "containerLogs of an unknown pod",
        bytes: REQ(
          "GET",
          `/containerLogs/${r.pick([pod.namespace, "..", "%2F"])}/${r.pick(["..", `${pod.name}/..`, "x".repeat(1 + r.int(3000))])}/${pod.container}`,
        ),
        ok: [400, 404],
      });
    else if (kind === 3)
      out.push({
        what: "logs traversal",
        bytes: REQ(
          "GET",
          `/logs/${r.pick(["", "x/"])}${r.pick(["../", "..%2f", "%2e%2e/", "..%5c"]).repeat(1 + r.int(6))}${r.pick(["etc/shadow", "proc/self/environ"])}`,
        ),
        ok: [400, 404],
      });
    else out.push({ what: "containerLogs with an upgrade head", bytes: REQ("GET", `${logs}?follow=true&tailLines=-1`, UPGRADE_WS), ok: [422] });
  }
  return out;
}

/** How a slow or half-open client behaves: what it sends first, then what it drips (if anything) every second. */
export interface SlowClient {
  what: string;
  first: string;
  drip?: string;
}

/** Clients the server must let go of by itself: silent, half an upgrade head, dripped upgrade headers. */
export function slowStreamingClients(pod: KnownPod): SlowClient[] {
  const head = `POST /exec/${pod.namespace}/${pod.name}/${pod.container}?command=sh&output=1 HTTP/1.1\r\nHost: k\r\n`;
  return [
    { what: "silent after connecting", first: "" },
    { what: "half a request line", first: "POST /exec/def" },
    { what: "an upgrade head without its end", first: `${head}Connection: Upgrade\r\nUpgrade: SPDY/3.1\r\n` },
    { what: "upgrade headers dripped one a second", first: head, drip: "X-Slow: 1\r\n" },
    {
      what: "a follow request head dripped",
      first: `GET /containerLogs/${pod.namespace}/${pod.name}/${pod.container}?follow=true HTTP/1.1\r\n`,
      drip: "X-Slow: 1\r\n",
    },
  ];
}
