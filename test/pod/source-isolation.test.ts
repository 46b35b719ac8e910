// One bad staticPodURL body (a YAML alias bomb) must not stop the pod lifecycle:
// the sync loop, PLEG, housekeeping and the other sources start and run on their own.
import { afterEach, describe, expect, test } from "bun:test";
import { createPodLifecycle } from "../../src/pod/lifecycle.ts";
import type { PodLifecycle } from "../../src/pod/lifecycle-types.ts";
import { createSettlingClock } from "../support/settling-clock.ts";
import { createFakeRuntime, makePod } from "./fake-runtime.ts";
import { aliasBomb } from "../support/hostile.ts";

const goodPod = "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  containers: [{name: app, image: bunlet.local/busybox:1}]\n";

let lc: PodLifecycle | undefined;
afterEach(async () => {
  await lc?.stop();
  lc = undefined;
});

describe("each source and loop starts and fails on its own", () => {
  test("an alias bomb from staticPodURL: start resolves, loops run, the URL keeps being polled", async () => {
    const clock = createSettlingClock();
    const rt = createFakeRuntime(clock.now);
    let body = aliasBomb;
    let fetches = 0;
    const fetchFake = (async () => {
      fetches++;
      return new Response(body);
    }) as unknown as typeof fetch;
    lc = createPodLifecycle({
      runtime: rt,
      clock,
      fetch: fetchFake,
      config: { nodeName: "n", hostIP: "10.0.0.1", staticPodURL: "http://127.0.0.1:1/pods", httpCheckFrequencyMs: 20_000 },
    });
    await lc.start();
    expect(lc.manifestErrors().length).toBe(1);
    expect(lc.manifestErrors()[0]!.message).toContain("http://127.0.0.1:1/pods");
    expect(lc.manifestErrors()[0]!.message).toMatch(/alias/i);

    // The sync loop and PLEG run: a pod from another source starts, and a killed container restarts.
    lc.handleUpdate({ op: "SET", pods: [makePod({ name: "other", uid: "u1" })], source: "api" });
    await clock.advance(0);
    await lc.whenIdle();
    expect(rt.calls).toContain("start other/app#0");
    rt.exit("u1", "app", 137);
    await clock.advance(1_000);
    await lc.whenIdle();
    await clock.advance(0);
    expect(rt.calls.filter((c) => c === "start other/app#1" || c.startsWith("start other/app")).length).toBeGreaterThanOrEqual(2);

    // The URL is polled again and a fixed body is acted on.
    body = goodPod;
    await clock.advance(20_000);
    await lc.whenIdle();
    expect(fetches).toBeGreaterThanOrEqual(2);
    expect(lc.manifestErrors()).toEqual([]);
    expect(rt.calls).toContain("start web-n/app#0");
  });

  test("a failing staticPodURL beside a good staticPodPath: the file pods run", async () => {
    const { mkdtempSync, rmSync, writeFileSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const { join } = await import("node:path");
    const dir = mkdtempSync(join(tmpdir(), `bunlet-iso-${process.pid}-`));
    try {
      writeFileSync(join(dir, "web.yaml"), goodPod);
      const clock = createSettlingClock();
      const rt = createFakeRuntime(clock.now);
      const fetchFake = (async () => {
        throw new TypeError("boom from a broken fetch");
      }) as unknown as typeof fetch;
      lc = createPodLifecycle({
        runtime: rt,
        clock,
        fetch: fetchFake,
        config: { nodeName: "n", hostIP: "10.0.0.1", staticPodPath: dir, fileCheckFrequencyMs: 3_600_000, staticPodURL: "http://127.0.0.1:1/pods" },
      });
      await lc.start();
      await clock.advance(0);
      await lc.whenIdle();
      expect(rt.calls).toContain("start web-n/app#0");
      expect(
        lc
          .manifestErrors()
          .map((e) => e.message)
          .join(),
      ).toContain("boom from a broken fetch");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
