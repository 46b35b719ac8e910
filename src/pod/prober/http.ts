// The HTTP probe (upstream pkg/probe/http: http.go DoHTTPProbe and RedirectChecker, request.go
// NewRequestForHTTPGetAction): GET the container's URL; 200–399 is success, any other status a
// failure naming the code (never the body: it may hold secrets, upstream #99425). The prober never
// follows a redirect to another host (followNonLocalRedirects=false): redirects to the same host are
// followed as Go's client does (301/302/303/307/308 with a Location, at most 10 requests), and a 3xx
// that ends the chain — a redirect elsewhere included — is a success with a warning, which the
// prober records as a ProbeWarning event.
import { readAtMost } from "../read-at-most.ts";
import type { ProbeOutcome } from "./state.ts";

/** Go's http.Client default: the 10th redirect is refused. */
const MAX_REDIRECTS = 10;
const REDIRECT_CODES = new Set([301, 302, 303, 307, 308]);

/** upstream newProbeRequest: the probe's headers, User-Agent and Accept defaulted, an empty Accept dropped. */
export function probeHeaders(httpHeaders: { name: string; value: string }[] | undefined, userAgent: string): Headers {
  const headers = new Headers();
  for (const h of httpHeaders ?? []) headers.append(h.name, h.value);
  if (!headers.has("User-Agent")) headers.set("User-Agent", userAgent);
  if (!headers.has("Accept")) headers.set("Accept", "*/*");
  else if (headers.get("Accept") === "") headers.delete("Accept");
  return headers;
}

/**
 * Where a response sends the client next, or undefined when it ends the chain (not a redirect
 * status, or no Location, as Go's client returns such a response as it is). Throws on a
 * Location that is not a URL.
 */
export function redirectTarget(status: number, location: string | null, current: URL): URL | undefined {
  if (!REDIRECT_CODES.has(status) || !location) return undefined;
  try {
    return new URL(location, current);
  } catch {
    throw new Error(`failed to parse Location header "${location}"`);
  }
}

/** upstream DoHTTPProbe's verdict on the response that ended the chain. */
export function httpOutcome(status: number, body: string): ProbeOutcome {
  if (status >= 200 && status < 300) return { result: "success", output: body };
  if (status >= 300 && status < 400) return { result: "success", output: `Probe terminated redirects, Response body: ${body}`, warning: true };
  return { result: "failure", output: `HTTP probe failed with statuscode: ${status}` };
}

/** One HTTP probe: the request chain within `timeoutMs` (Go's Client.Timeout covers the redirects too). */
export async function httpProbe(url: string, headers: Headers, timeoutMs: number, doFetch: typeof fetch = fetch): Promise<ProbeOutcome> {
  const first = new URL(url);
  let current = first;
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    for (let requests = 1; ; requests++) {
      const res = await doFetch(current.href, {
        headers,
        redirect: "manual",
        signal,
        // Bun fetch TLS option: probes do not verify certificates (upstream InsecureSkipVerify).
        tls: { rejectUnauthorized: false },
      });
      const next = redirectTarget(res.status, res.headers.get("Location"), current);
      // upstream RedirectChecker: another host ends the chain on this response.
      if (next && next.hostname === first.hostname) {
        await res.body?.cancel().catch(() => undefined);
        if (requests >= MAX_REDIRECTS) return { result: "failure", output: `Get "${current.href}": stopped after ${MAX_REDIRECTS} redirects` };
        current = next;
        continue;
      }
      // ReadAtMost(maxRespBodyLength): a longer body is cut, not an error.
      return httpOutcome(res.status, new TextDecoder().decode((await readAtMost(res)).bytes));
    }
  } catch (e) {
    return { result: "failure", output: `Get "${current.href}": ${(e as Error).message}` };
  }
}
