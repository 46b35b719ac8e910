import { describe, expect, test } from "bun:test";
import type { KubeClient } from "../../../src/kube/index.ts";
import { createManualClock } from "../../../src/manual-clock.ts";
import { createApiSource } from "../../../src/pod/sources/api.ts";
import type { PodUpdate } from "../../../src/pod/sources/update.ts";

/** A client whose list fails until `up` is set; its watch never sends. */
function flakyClient() {
  const state = { up: false, lists: 0 };
  const client = {
    request: async () => {
      state.lists++;
      if (!state.up) throw new Error("connect ECONNREFUSED 127.0.0.1:6443");
      return { metadata: { resourceVersion: "1" }, items: [] };
    },
    stream: async (o: { signal?: AbortSignal }) => new Response(new ReadableStream({ start: (c) => o.signal?.addEventListener("abort", () => c.close()) })),
  } as unknown as KubeClient;
  return { state, client };
}
const settle = async (cond: () => boolean) => {
  for (let i = 0; i < 100 && !cond(); i++) await Bun.sleep(2);
  return cond();
};

describe("API pod source retryNow", () => {
  test("a list waiting out its back-off tries at once when told the API server answers again", async () => {
    const { state, client } = flakyClient();
    const updates: PodUpdate[] = [];
    const failed: string[] = [];
    const src = createApiSource({
      client,
      nodeName: "n",
      clock: createManualClock(0),
      onUpdate: (u) => updates.push(u),
      onListFailed: (e) => failed.push(e.message),
    });
    src.start();
    expect(await settle(() => state.lists === 1 && failed.length === 1)).toBe(true);
    state.up = true;
    await Bun.sleep(20);
    expect(state.lists).toBe(1); // still in its 800 ms back-off (the manual clock does not move)
    src.retryNow();
    expect(await settle(() => updates.length === 1)).toBe(true);
    expect(updates[0]).toMatchObject({ op: "SET", pods: [], source: "api" });
    src.retryNow(); // not waiting: nothing happens
    await Bun.sleep(20);
    expect(state.lists).toBe(2);
    src.stop();
  });
});
