// The kubelet's auth filter in front of every main-port handler (upstream server.go
// InstallAuthFilter): authenticate → 401 "Unauthorized"; build the request's attributes → authorize
// each until one is allowed → 403 "Forbidden (user=…, verb=…, resource=…, subresource(s)=[…])";
// an authorizer error → 500 "Authorization error (…)". The user's name is logged, never a credential.
import { log, kv } from "../../log.ts";
import { requestAttributes } from "./attributes.ts";
import type { Authenticator } from "./authenticate.ts";
import type { Authorizer } from "./authorize.ts";
import type { ClientCertificate, UserInfo } from "./types.ts";

export interface KubeletAuth {
  authenticate: Authenticator;
  authorize: Authorizer;
  nodeName: string;
  /** KubeletFineGrainedAuthz feature gate (default on). */
  fineGrained: boolean;
}

export type AuthedHandler = (req: Request, user: UserInfo) => Promise<Response>;

function plain(body: string, status: number): Response {
  return new Response(body, { status, headers: { "content-type": "text/plain; charset=utf-8", "x-content-type-options": "nosniff" } });
}

/** Decides a request; returns the user when it may proceed, else the response to send. */
export async function authorizeRequest(auth: KubeletAuth, req: Request, cert: ClientCertificate): Promise<{ user: UserInfo } | { response: Response }> {
  const url = new URL(req.url);
  const authn = await auth.authenticate({ clientCertificate: cert, authorization: req.headers.get("authorization") });
  if (!authn.user) {
    if (authn.error) log.info(`Unable to authenticate the request ${kv({ path: url.pathname, error: authn.error })}`);
    return { response: plain("Unauthorized", 401) };
  }
  const user = authn.user;
  const all = requestAttributes(user, req.method, url.pathname, auth.nodeName, auth.fineGrained);
  for (const attrs of all) {
    let decision;
    try {
      decision = (await auth.authorize(attrs)).decision;
    } catch (err) {
      log.error(
        `Authorization error ${kv({ user: user.name, verb: attrs.verb, resource: attrs.resource, subresource: attrs.subresource, error: err instanceof Error ? err.message : String(err) })}`,
      );
      return {
        response: plain(`Authorization error (user=${user.name}, verb=${attrs.verb}, resource=${attrs.resource}, subresource=${attrs.subresource})`, 500),
      };
    }
    if (decision === "allow") return { user };
  }
  const first = all[0]!;
  const subresources = `[${all.map((a) => a.subresource).join(" ")}]`;
  log.debug(`Forbidden ${kv({ user: user.name, verb: first.verb, resource: first.resource, subresource: subresources })}`);
  return { response: plain(`Forbidden (user=${user.name}, verb=${first.verb}, resource=${first.resource}, subresource(s)=${subresources})`, 403) };
}

/** Wraps a request handler (the router) with the filter. */
export function withAuth(auth: KubeletAuth, next: (req: Request) => Promise<Response>): (req: Request, cert: ClientCertificate) => Promise<Response> {
  return async (req, cert) => {
    const r = await authorizeRequest(auth, req, cert);
    return "response" in r ? r.response : next(req);
  };
}
