import { describe, expect, test } from "bun:test";
import type { CriClient } from "../../src/cri/client.ts";
import { GrpcCode, GrpcError } from "../../src/cri/client.ts";
import { POD_UID_LABEL } from "../../src/pod/kuberuntime/labels.ts";
import { observeStopContainer, waitForRuntime, type StopContainerEvent } from "../../src/wire/runtime.ts";

function fakeCri(over: Partial<CriClient>): CriClient {
  return { endpoint: "unix:///fake.sock", ...over } as CriClient;
}

describe("observeStopContainer", () => {
  test("reports sent/done for a container whose pod it learnt from a listing", async () => {
    const calls: string[] = [];
    const cri = fakeCri({
      listContainers: async () => [{ id: "c1", labels: { [POD_UID_LABEL]: "uid-a" } } as never, { id: "c2", labels: {} } as never],
      stopContainer: async (id, t) => void calls.push(`${id}/${t}`),
    });
    const events: StopContainerEvent[] = [];
    let now = 10;
    const wrapped = observeStopContainer(
      cri,
      (e) => events.push(e),
      () => now++,
    );
    await wrapped.listContainers();
    await wrapped.stopContainer("c1", 1);
    await wrapped.stopContainer("c2", 0);
    expect(calls).toEqual(["c1/1", "c2/0"]);
    expect(events).toEqual([
      { containerId: "c1", podUid: "uid-a", phase: "sent", atMs: 10 },
      { containerId: "c1", podUid: "uid-a", phase: "done", atMs: 11 },
      { containerId: "c2", podUid: undefined, phase: "sent", atMs: 12 },
      { containerId: "c2", podUid: undefined, phase: "done", atMs: 13 },
    ]);
  });

  test("a failed stop is reported with its error and still rejects", async () => {
    const cri = fakeCri({ stopContainer: async () => Promise.reject(new Error("boom")) });
    const events: StopContainerEvent[] = [];
    const wrapped = observeStopContainer(
      cri,
      (e) => events.push(e),
      () => 1,
    );
    await expect(wrapped.stopContainer("c1", 1)).rejects.toThrow("boom");
    expect(events.map((e) => [e.phase, e.error])).toEqual([
      ["sent", undefined],
      ["done", "boom"],
    ]);
  });

  test("a throwing observer never breaks the stop", async () => {
    let stopped = false;
    const cri = fakeCri({ stopContainer: async () => void (stopped = true) });
    const wrapped = observeStopContainer(cri, () => {
      throw new Error("observer bug");
    });
    await wrapped.stopContainer("c1", 1);
    expect(stopped).toBe(true);
  });
});

describe("waitForRuntime", () => {
  const unavailable = () => new GrpcError("/runtime.v1.RuntimeService/Version", GrpcCode.UNAVAILABLE, "connect ENOENT /fake.sock");

  test("retries until the runtime answers", async () => {
    let calls = 0;
    const sleeps: number[] = [];
    const cri = fakeCri({
      version: async () => {
        if (++calls < 3) throw unavailable();
        return { version: "0.1.0", runtimeName: "containerd", runtimeVersion: "1.6.20", runtimeApiVersion: "v1" };
      },
    });
    const ok = await waitForRuntime(cri, { signal: new AbortController().signal, retryMs: 250, sleep: async (ms) => void sleeps.push(ms) });
    expect(ok).toBe(true);
    expect(calls).toBe(3);
    expect(sleeps).toEqual([250, 250]);
  });

  test("returns false once aborted, without another attempt", async () => {
    const ac = new AbortController();
    let calls = 0;
    const cri = fakeCri({
      version: async () => {
        calls++;
        throw unavailable();
      },
    });
    const ok = await waitForRuntime(cri, { signal: ac.signal, sleep: async () => ac.abort() });
    expect(ok).toBe(false);
    expect(calls).toBe(1);
  });
});
