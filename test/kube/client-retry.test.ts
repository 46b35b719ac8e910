// The API client's retries as client-go's rest client does them: a 429 or 5xx carrying Retry-After
// is sent again after that many seconds (at least 1), up to maxRetries (client-go: 10); without
// Retry-After, or once the retries are spent, the error is the Status the server sent. A request
// slower than the client's timeout (rest.Config.Timeout: the heartbeat client's) is abandoned.
import { afterAll, expect, test } from "bun:test";
import type { Clock } from "../../src/clock.ts";
import { ApiError, createKubeClient } from "../../src/kube/index.ts";

let answers: { status: number; retryAfter?: string; delayMs?: number }[] = [];
let hits = 0;
const server = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  async fetch() {
    hits++;
    const a = answers.shift() ?? { status: 200 };
    if (a.delayMs) await Bun.sleep(a.delayMs);
    const headers: Record<string, string> = { "content-type": "application/json", ...(a.retryAfter !== undefined ? { "retry-after": a.retryAfter } : {}) };
    const body =
      a.status === 200
        ? { kind: "Node", metadata: { name: "n1" } }
        : { kind: "Status", code: a.status, reason: a.status === 429 ? "TooManyRequests" : "ServiceUnavailable", message: "slow down" };
    return new Response(JSON.stringify(body), { status: a.status, headers });
  },
});
afterAll(() => server.stop(true));

/** A clock whose timers fire at once and remember how long they were asked to wait. */
function recordingClock(): Clock & { waits: number[] } {
  const waits: number[] = [];
  return { waits, now: () => Date.now(), setTimeout: (fn, ms) => (waits.push(ms), queueMicrotask(fn), { id: 0 }), clearTimeout: () => {} } as Clock & {
    waits: number[];
  };
}
const client = (clock: Clock, maxRetries?: number, timeoutMs?: number) =>
  createKubeClient({ server: `http://127.0.0.1:${server.port}`, source: "test" }, { clock, maxRetries, timeoutMs });

test("429 and 503 with Retry-After are retried after that many seconds (at least 1), then the answer", async () => {
  answers = [
    { status: 429, retryAfter: "2" },
    { status: 503, retryAfter: "0" },
  ];
  hits = 0;
  const clock = recordingClock();
  expect(await client(clock).request<{ metadata: { name: string } }>({ path: "/api/v1/nodes/n1" })).toMatchObject({ metadata: { name: "n1" } });
  expect(hits).toBe(3);
  expect(clock.waits).toEqual([2000, 1000]);
});

test("without Retry-After, or past maxRetries, the server's Status is the error", async () => {
  answers = [{ status: 503 }];
  hits = 0;
  const err = await client(recordingClock())
    .request({ path: "/api/v1/nodes/n1" })
    .catch((e) => e);
  expect(err).toBeInstanceOf(ApiError);
  expect(err).toMatchObject({ code: 503, reason: "ServiceUnavailable", message: "slow down" });
  expect(hits).toBe(1);
  answers = [
    { status: 429, retryAfter: "1" },
    { status: 429, retryAfter: "1" },
    { status: 429, retryAfter: "1" },
  ];
  hits = 0;
  const clock = recordingClock();
  await expect(client(clock, 2).request({ path: "/api/v1/nodes/n1" })).rejects.toMatchObject({ code: 429, reason: "TooManyRequests" });
  expect(hits).toBe(3);
  expect(clock.waits).toEqual([1000, 1000]);
});

test("timeoutMs: a request the server does not answer in time fails; a watch stream is not cut by it", async () => {
  answers = [{ status: 200, delayMs: 2000 }];
  // Without the timeout this would answer 200 after 2 s.
  await expect(client(recordingClock(), 0, 100).request({ path: "/api/v1/nodes/n1" })).rejects.toThrow();
  answers = [{ status: 200, delayMs: 300 }];
  expect((await client(recordingClock(), 0, 100).stream({ path: "/api/v1/nodes" })).status).toBe(200);
});
