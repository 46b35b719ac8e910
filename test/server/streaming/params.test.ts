import { describe, expect, test } from "bun:test";
import { parsePortForwardPorts, parseStreamOptions, parseStreamPath, runCommand } from "../../../src/server/streaming/params.ts";
import { isUpgradeRequest, isWebSocketRequest, parseRequestHead, requestLine } from "../../../src/server/streaming/request-head.ts";

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

  test.each(["/exec", "/exec/", "/exec/ns", "/exec/ns/pod", "/exec/ns/pod/a/b/c", "/exec/ns//c", "/portForward/ns", "/portForward/ns/p/u/x", "/exec/%E0%A4%A/p/c", "/execx/ns/p/c", "/pods"])("%s names no endpoint", (path) => {
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
  test("WebSocket: repeated and comma-separated", () => expect(parsePortForwardPorts(new URLSearchParams("port=80,81&port=8080"), true)).toEqual([80, 81, 8080]));
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
  const head = (s: string) => parseRequestHead(Buffer.from(s));
  test("an SPDY upgrade", () => {
    const h = head("POST /exec/a/b/c?command=sh HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: v4.channel.k8s.io\r\n\r\n")!;
    expect(h.method).toBe("POST");
    expect(h.target).toBe("/exec/a/b/c?command=sh");
    expect(isUpgradeRequest(h)).toBe(true);
    expect(isWebSocketRequest(h)).toBe(false);
  });
  test("a WebSocket upgrade", () => {
    const h = head("GET /portForward/a/b?port=80 HTTP/1.1\r\nConnection: keep-alive, Upgrade\r\nUpgrade: websocket\r\n\r\n")!;
    expect(isWebSocketRequest(h)).toBe(true);
  });
  test("no Connection: upgrade", () => expect(isUpgradeRequest(head("GET / HTTP/1.1\r\nUpgrade: websocket\r\n\r\n")!)).toBe(false));
  test.each(["GET / HTTP/2\r\n\r\n", "GET x HTTP/1.1\r\n\r\n", "G(T / HTTP/1.1\r\n\r\n", "GET / HTTP/1.1\r\nbad header\r\n\r\n", "GET / HTTP/1.1\r\n: v\r\n\r\n"])("%p is not HTTP/1.x", (s) => {
    expect(head(s)).toBeUndefined();
  });
  test("request line: incomplete, invalid, oversized", () => {
    expect(requestLine(Buffer.from("GET /exec"))).toBe("incomplete");
    expect(requestLine(Buffer.from("\x16\x03\x01\r\n"))).toBe("invalid");
    expect(requestLine(Buffer.alloc(9000, "a"))).toBe("too-long");
    expect(requestLine(Buffer.from("GET /a\x01b HTTP/1.1\r\n", "latin1"))).toBe("invalid");
    expect(requestLine(Buffer.from("GET /a HTTP/9.9\r\n"))).toMatchObject({ version: "HTTP/9.9" });
  });
});
