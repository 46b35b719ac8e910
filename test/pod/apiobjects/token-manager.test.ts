// The token manager's refresh rule (upstream token_manager.go requiresRefresh) and its cache: a token
// is fetched again past 80 % of its lifetime or 24 h; a failed refresh keeps the cached token until it
// expires; a pod's tokens go with it.
import { describe, expect, test } from "bun:test";
import { createManualClock } from "../../../src/manual-clock.ts";
import { createTokenManager, requiresRefresh } from "../../../src/pod/apiobjects/index.ts";
import type { KubeClient } from "../../../src/kube/index.ts";

const H = 3600_000;

describe("requiresRefresh", () => {
  const t = { token: "t", expirationMs: 10 * H, expirationSeconds: 3600 }; // issued at 9 h
  test.each([
    ["79 % of the lifetime", 9 * H + 0.79 * H, 0, false],
    ["81 % of the lifetime", 9 * H + 0.81 * H, 0, true],
    ["5 s before 80 %, jitter 10 s", 9 * H + 0.8 * H - 5_000, 10_000, true],
  ])("%s → %p", (_n, now, jitter, want) => expect(requiresRefresh(t, now, jitter)).toBe(want));
  test("a year-long token is refreshed after 24 h", () => {
    const year = { token: "t", expirationMs: 365 * 24 * H, expirationSeconds: 365 * 24 * 3600 };
    expect(requiresRefresh(year, 23 * H, 0)).toBe(false);
    expect(requiresRefresh(year, 24 * H + 1, 0)).toBe(true);
  });
});

describe("token manager", () => {
  function fakeClient(clock: { now(): number }) {
    const calls: any[] = [];
    let fail = false;
    const client = {
      async request(o: any) {
        calls.push(o);
        if (fail) throw new Error("connection refused");
        const exp = o.body.spec.expirationSeconds;
        return {
          spec: { expirationSeconds: exp },
          status: { token: `tok-${calls.length}`, expirationTimestamp: new Date(clock.now() + exp * 1000).toISOString() },
        };
      },
    } as unknown as KubeClient;
    return { client, calls, setFail: (f: boolean) => (fail = f) };
  }
  const spec = { expirationSeconds: 3600, boundObjectRef: { apiVersion: "v1" as const, kind: "Pod" as const, name: "p", uid: "u1" } };

  test("TokenRequest bound to the pod; cached until 80 % of the TTL; a failed refresh serves the cached token", async () => {
    const clock = createManualClock(1_000_000);
    const f = fakeClient(clock);
    const m = createTokenManager({ client: () => f.client, clock, random: () => 0 });
    expect(await m.getServiceAccountToken("ns", "default", { ...spec, audiences: ["api"] })).toBe("tok-1");
    expect(f.calls[0]).toMatchObject({
      method: "POST",
      path: "/api/v1/namespaces/ns/serviceaccounts/default/token",
      body: { kind: "TokenRequest", spec: { audiences: ["api"], expirationSeconds: 3600, boundObjectRef: { kind: "Pod", name: "p", uid: "u1" } } },
    });
    clock.advance(0.79 * H);
    expect(await m.getServiceAccountToken("ns", "default", { ...spec, audiences: ["api"] })).toBe("tok-1");
    clock.advance(0.02 * H);
    expect(await m.getServiceAccountToken("ns", "default", { ...spec, audiences: ["api"] })).toBe("tok-2");
    f.setFail(true);
    clock.advance(0.81 * H);
    expect(await m.getServiceAccountToken("ns", "default", { ...spec, audiences: ["api"] })).toBe("tok-2");
    clock.advance(0.2 * H);
    // Expired: the minute's cleanup dropped it, so the failure is reported as a first fetch's.
    await expect(m.getServiceAccountToken("ns", "default", { ...spec, audiences: ["api"] })).rejects.toThrow("failed to fetch token: connection refused");
    await expect(m.getServiceAccountToken("ns", "other", spec)).rejects.toThrow("failed to fetch token: connection refused");
  });

  test("a pod's tokens are dropped with it", async () => {
    const clock = createManualClock(0);
    const f = fakeClient(clock);
    const m = createTokenManager({ client: () => f.client, clock });
    await m.getServiceAccountToken("ns", "default", spec);
    expect(m.keys().length).toBe(1);
    m.deleteServiceAccountToken("u1");
    expect(m.keys()).toEqual([]);
  });
});
