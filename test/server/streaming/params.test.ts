import { describe, expect, test } from "bun:test";
import { parsePortForwardPorts, parseStreamOptions, parseStreamPath, runCommand } from "../../../src/server/streaming/params.ts";
import { headEnd, isUpgradeRequest, isWebSocketRequest, type RequestHead } from "../../../src/server/streaming/request-head.ts";
import { backendRequestHead, HeadSmugglingError } from "../../../src/server/streaming/upgrade-proxy.ts";

describe("streaming paths", () => {
  test.each([
    ["/exec/ns/pod/c", { kind: "exec", namespace: "ns", pod: "pod", uid: "", container: "c" }],
    ["/exec/ns/pod/uid-1/c", { kind: "exec", namespace: "ns", pod: "pod", uid: "uid-1", container: "c" }],
    ["/attach/ns/pod/c", { kind: "attach", namespace: "ns", pod: "pod", uid: "", container: "c" }],
    ["/portForward/ns/pod", { kind: "portForward", namespace: "ns", pod: "pod", uid: "", container: "" }],
    ["/portForward/ns/pod/u", { kind: "portForward", namespace: "ns", pod: "pod", uid: "u", container: "" }],
    ["/run/ns/pod/c", { kind: "run", namespace: "ns", pod: "pod", uid: "", container: "c" }],
    ["/exec/ns/p%20x/c", { kind: "exec", namespace: "ns", pod: "p x", uid: "", container: "c" }],
  ])("%s", (path, want) => expect(parseStreamPath(path)).toEqual(want as never));

  test.each([
    "/exec",
    "/exec/",
    "/exec/ns",
    "/exec/ns/pod",
    "/exec/ns/pod/a/b/c",
    "/exec/ns//c",
    "/portForward/ns",
    "/portForward/ns/p/u/x",
    "/exec/%E0%A4%A/p/c",
    "/execx/ns/p/c",
    "/pods",
  ])("%s names no endpoint", (path) => {
    expect(parseStreamPath(path)).toBeUndefined();
  });
});

describe("stream options (remotecommand NewOptions)", () => {
  test("1 turns a stream on; tty drops stderr", () => {
    expect(parseStreamOptions(new URLSearchParams("input=1&output=1&error=1&tty=1"))).toEqual({ stdin: true, stdout: true, stderr: false, tty: true });
    expect(parseStreamOptions(new URLSearchParams("output=1&error=1"))).toEqual({ stdin: false, stdout: true, stderr: true, tty: false });
  });
  test.each(["", "output=true", "tty=1", "input=0&output=0", "stdin=1&stdout=1&stderr=1"])("%p → at least one stream", (q) => {
    expect(() => parseStreamOptions(new URLSearchParams(q))).toThrow("you must specify at least 1 of stdin, stdout, stderr");
  });
  test("run splits cmd on spaces", () => expect(runCommand(new URLSearchParams("cmd=echo%20a%20b"))).toEqual(["echo", "a", "b"]));
});

describe("port-forward ports (NewV4Options)", () => {
  test("SPDY clients name ports per stream: none in the query", () => expect(parsePortForwardPorts(new URLSearchParams("port=x"), false)).toEqual([]));
  test("WebSocket: repeated and comma-separated", () =>
    expect(parsePortForwardPorts(new URLSearchParams("port=80,81&port=8080"), true)).toEqual([80, 81, 8080]));
  test.each([
    ["", `query parameter "port" is required`],
    ["port=", `query parameter "port" cannot be empty`],
    ["port=abc", `unable to parse "abc" as a port`],
    ["port=70000", "value out of range"],
    ["port=0", `port "0" must be > 0`],
    ["port=-1", "invalid syntax"],
  ])("%p → %s", (q, msg) => expect(() => parsePortForwardPorts(new URLSearchParams(q), true)).toThrow(msg));
});

describe("request head", () => {
  const head = (target: string, headers: [string, string][]): RequestHead => ({ method: "POST", target, version: "HTTP/1.1", headers });
  test("an SPDY upgrade", () => {
    const h = head("/exec/a/b/c?command=sh", [
      ["Host", "x"],
      ["Connection", "Upgrade"],
      ["Upgrade", "SPDY/3.1"],
      ["X-Stream-Protocol-Version", "v4.channel.k8s.io"],
    ]);
    expect(isUpgradeRequest(h)).toBe(true);
    expect(isWebSocketRequest(h)).toBe(false);
  });
  test("a WebSocket upgrade", () =>
    expect(
      isWebSocketRequest(
        head("/portForward/a/b?port=80", [
          ["Connection", "keep-alive, Upgrade"],
          ["Upgrade", "websocket"],
        ]),
      ),
    ).toBe(true));
  test("no Connection: upgrade", () => expect(isUpgradeRequest(head("/", [["Upgrade", "websocket"]]))).toBe(false));
  test("the end of a head, searched from a given offset", () => {
    expect(headEnd(Buffer.from("HTTP/1.1 101 X\r\nA: b\r\n\r\nrest"))).toBe(24);
    expect(headEnd(Buffer.from("HTTP/1.1 101 X\r\n\r"))).toBe(-1);
    expect(headEnd(Buffer.from("\r\n\r\n\r\n\r\n"), 1)).toBe(6);
  });
});

describe("the head re-issued to the runtime (backendRequestHead)", () => {
  const location = new URL("http://127.0.0.1:1234/exec/tok?x=1");
  const head = (headers: [string, string][]): RequestHead => ({ method: "POST", target: "/exec/a/b/c", version: "HTTP/1.1", headers });
  test("one header a line, Host and credentials replaced, X-Forwarded-For appended", () => {
    const out = backendRequestHead(
      head([
        ["Host", "kubelet"],
        ["Authorization", "Bearer s"],
        ["Upgrade", "SPDY/3.1"],
        ["X-Forwarded-For", "10.0.0.1"],
      ]),
      location,
      "127.0.0.1",
    ).toString();
    expect(out).toBe("POST /exec/tok?x=1 HTTP/1.1\r\nHost: 127.0.0.1:1234\r\nUpgrade: SPDY/3.1\r\nX-Forwarded-For: 10.0.0.1, 127.0.0.1\r\n\r\n");
  });
  test.each([
    ["a bare LF in a value", ["X-A", "a\nTransfer-Encoding: chunked"]],
    ["a bare CR in a value", ["X-A", "a\rB: c"]],
    ["a NUL in a value", ["X-A", "a\u0000b"]],
    ["a name that is no token", ["X A", "v"]],
  ] as const)("%s never reaches the runtime", (_what, h) => {
    expect(() => backendRequestHead(head([[h[0], h[1]]]), location)).toThrow(HeadSmugglingError);
  });
});
