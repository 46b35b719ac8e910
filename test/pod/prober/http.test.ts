import { afterAll, describe, expect, test } from "bun:test";
import { httpOutcome, httpProbe, probeHeaders, redirectTarget } from "../../../src/pod/prober/http.ts";

describe("HTTP probe verdicts (upstream DoHTTPProbe)", () => {
  test.each<[number, string, ReturnType<typeof httpOutcome>]>([
    [200, "ok", { result: "success", output: "ok" }],
    [204, "", { result: "success", output: "" }],
    [
      302,
      '<a href="http://0.0.0.0/">Found</a>.\n\n',
      { result: "success", output: 'Probe terminated redirects, Response body: <a href="http://0.0.0.0/">Found</a>.\n\n', warning: true },
    ],
    [399, "x", { result: "success", output: "Probe terminated redirects, Response body: x", warning: true }],
    [400, "secret", { result: "failure", output: "HTTP probe failed with statuscode: 400" }],
    [503, "", { result: "failure", output: "HTTP probe failed with statuscode: 503" }],
  ])("status %d", (status, body, want) => expect(httpOutcome(status, body)).toEqual(want));

  test.each<[number, string | null, string | undefined]>([
    [302, "/healthz", "http://10.0.0.5:8080/healthz"],
    [301, "http://0.0.0.0/", "http://0.0.0.0/"],
    [303, "other?x=1", "http://10.0.0.5:8080/a/other?x=1"],
    [307, "/b", "http://10.0.0.5:8080/b"],
    [308, "/b", "http://10.0.0.5:8080/b"],
    [302, null, undefined], // no Location: the response is the answer
    [304, "/b", undefined], // not a redirect Go's client follows
    [200, "/b", undefined],
  ])("redirectTarget(%d, %p)", (status, location, want) => {
    expect(redirectTarget(status, location, new URL("http://10.0.0.5:8080/a/b?c=1"))?.href).toBe(want);
  });

  test("a Location that is not a URL is an error naming it", () => {
    expect(() => redirectTarget(302, "http://[bad", new URL("http://10.0.0.5/"))).toThrow('failed to parse Location header "http://[bad"');
  });
});

describe("probe headers (upstream newProbeRequest)", () => {
  test("User-Agent and Accept defaulted; the probe's own kept; an empty Accept dropped", () => {
    const plain = probeHeaders(undefined, "kube-probe/1.31");
    expect([plain.get("user-agent"), plain.get("accept")]).toEqual(["kube-probe/1.31", "*/*"]);
    const own = probeHeaders(
      [
        { name: "User-Agent", value: "mine" },
        { name: "Accept", value: "" },
        { name: "X-Multi", value: "a" },
        { name: "X-Multi", value: "b" },
      ],
      "kube-probe/1.31",
    );
    expect([own.get("user-agent"), own.has("accept"), own.get("x-multi")]).toEqual(["mine", false, "a, b"]);
  });
});

describe("httpProbe redirects (upstream RedirectChecker with followNonLocalRedirects=false)", () => {
  let healthy = true;
  const seen: string[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch(req) {
      const url = new URL(req.url);
      seen.push(`${url.pathname} ${req.headers.get("x-probe") ?? ""}`);
      if (url.pathname === "/redirect") return new Response("", { status: 302, headers: { Location: url.searchParams.get("loc")! } });
      if (url.pathname === "/loop") return new Response("", { status: 302, headers: { Location: "/loop" } });
      if (url.pathname === "/healthz") return new Response(healthy ? "ok" : "", { status: healthy ? 200 : 500 });
      return new Response("", { status: 404 });
    },
  });
  afterAll(() => server.stop(true));
  const base = `http://127.0.0.1:${server.port}`;
  const headers = () => probeHeaders([{ name: "X-Probe", value: "1" }], "kube-probe/1.31");

  test("a redirect to the same host is followed, with the probe's headers: its answer decides", async () => {
    seen.length = 0;
    const url = `${base}/redirect?loc=${encodeURIComponent("/healthz")}`;
    expect(await httpProbe(url, headers(), 1000)).toEqual({ result: "success", output: "ok" });
    expect(seen).toEqual(["/redirect 1", "/healthz 1"]);
    healthy = false;
    expect(await httpProbe(url, headers(), 1000)).toEqual({ result: "failure", output: "HTTP probe failed with statuscode: 500" });
    healthy = true;
  });

  test("a redirect to another host is not followed: a success with a warning and the body", async () => {
    seen.length = 0;
    const out = await httpProbe(`${base}/redirect?loc=${encodeURIComponent("http://0.0.0.0/")}`, headers(), 1000);
    expect(out).toEqual({ result: "success", output: "Probe terminated redirects, Response body: ", warning: true });
    expect(seen).toEqual(["/redirect 1"]);
  });

  test("the 10th redirect is refused, as Go's client does", async () => {
    seen.length = 0;
    expect(await httpProbe(`${base}/loop`, headers(), 1000)).toEqual({ result: "failure", output: `Get "${base}/loop": stopped after 10 redirects` });
    expect(seen.length).toBe(10);
  });
});
